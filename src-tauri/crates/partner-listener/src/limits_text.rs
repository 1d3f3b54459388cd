//! The retention's byte budget and the junk rate as people write them (`--max-bytes 2GiB`,
//! `--junk-rate 20/s`), and the sizes said back the same way: one reading for `partner listen`
//! and the app, so both take and show the same text.

/// Reads a size: a whole or decimal number with an optional unit, `B`, `KB`/`MB`/`GB`/`TB`
/// (powers of 1000) or `KiB`/`MiB`/`GiB`/`TiB` (powers of 1024; `K`, `M`, `G`, `T` alone too),
/// case and spaces aside: `2GiB`, `500 MB`, `1048576`. The error says what was given.
pub fn parse_size(text: &str) -> Result<u64, String> {
    let trimmed = text.trim();
    let split = trimmed
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(trimmed.len());
    let (number, unit) = trimmed.split_at(split);
    let unit = unit.trim().to_ascii_lowercase();
    let scale: u64 = match unit.as_str() {
        "" | "b" => 1,
        "kb" => 1000,
        "mb" => 1000_u64.pow(2),
        "gb" => 1000_u64.pow(3),
        "tb" => 1000_u64.pow(4),
        "k" | "kib" => 1 << 10,
        "m" | "mib" => 1 << 20,
        "g" | "gib" => 1 << 30,
        "t" | "tib" => 1 << 40,
        _ => return Err(size_problem(text)),
    };
    let value: f64 = number.parse().map_err(|_| size_problem(text))?;
    let bytes = value * scale as f64;
    if !bytes.is_finite() || bytes < 1.0 || bytes >= u64::MAX as f64 {
        return Err(size_problem(text));
    }
    Ok(bytes as u64)
}

fn size_problem(text: &str) -> String {
    format!("{text:?} is not a size (e.g. 2GiB, 500MB, 1048576 bytes; at least one byte)")
}

/// A size as [`parse_size`] reads it back, in the largest binary unit that keeps it readable:
/// `2 GiB`, `1.5 MiB`, `512 B`.
pub fn format_size(bytes: u64) -> String {
    const UNITS: [&str; 4] = ["KiB", "MiB", "GiB", "TiB"];
    if bytes < 1024 {
        return format!("{bytes} B");
    }
    let mut value = bytes as f64;
    let mut unit = "B";
    for next in UNITS {
        if value < 1024.0 {
            break;
        }
        value /= 1024.0;
        unit = next;
    }
    let text = format!("{value:.1}");
    let text = text.strip_suffix(".0").unwrap_or(&text);
    format!("{text} {unit}")
}

/// Reads a junk rate: `N/s` or `N` (requests a second, at least 1), or `off` for none (every
/// request stored).
pub fn parse_rate(text: &str) -> Result<Option<u32>, String> {
    let trimmed = text.trim().to_ascii_lowercase();
    if trimmed == "off" || trimmed == "none" {
        return Ok(None);
    }
    let number = trimmed
        .strip_suffix("/s")
        .unwrap_or(&trimmed)
        .trim()
        .to_string();
    match number.parse::<u32>() {
        Ok(rate) if rate > 0 => Ok(Some(rate)),
        _ => Err(format!(
            "{text:?} is not a rate (requests a second, e.g. 20/s, or off)"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_read_as_people_write_them_and_are_said_back() {
        assert_eq!(parse_size("2GiB"), Ok(2 << 30));
        assert_eq!(parse_size(" 500 mb "), Ok(500_000_000));
        assert_eq!(parse_size("1048576"), Ok(1 << 20));
        assert_eq!(parse_size("1.5G"), Ok(3 << 29));
        for bad in ["", "0", "-1GB", "two", "5 parsecs", "1e400"] {
            assert!(parse_size(bad).is_err(), "{bad}");
        }
        assert_eq!(format_size(2 << 30), "2 GiB");
        assert_eq!(format_size(3 << 19), "1.5 MiB");
        assert_eq!(format_size(512), "512 B");
        assert_eq!(parse_rate("20/s"), Ok(Some(20)));
        assert_eq!(parse_rate("5"), Ok(Some(5)));
        assert_eq!(parse_rate("off"), Ok(None));
        assert!(parse_rate("0/s").is_err());
        assert!(parse_rate("fast").is_err());
    }
}
