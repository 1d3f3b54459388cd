//! Text inside XML (the JUnit report of a send, the console's SVG pictures): the five
//! characters XML gives meaning escaped, and the control characters XML 1.0 does not allow left
//! out, so whatever a service or a receiver said can be written into a document that parses.

/// `text` as XML character data or an attribute's value.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            c if (c as u32) < 0x20 && !matches!(c, '\t' | '\n' | '\r') => {}
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn markup_is_escaped_and_characters_xml_forbids_are_left_out() {
        assert_eq!(super::escape("a<b>&\"c'"), "a&lt;b&gt;&amp;&quot;c&apos;");
        assert_eq!(super::escape("x\u{1}y\tz"), "xy\tz");
    }
}
