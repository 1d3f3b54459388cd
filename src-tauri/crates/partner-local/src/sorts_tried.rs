//! What a service has said of the sort keys the console sent it, per listing, kept with the
//! saved connection (`SavedConnection::sorts_tried`).
//!
//! Why: which keys a service sorts by is not in the spec (issue #23). The console sends any
//! well-formed key to a service other than our sandbox and learns from the answer: a page that
//! came back accepted its keys; a 400 refused one. Remembering both lets the column headers say
//! which keys work on this service, and keeps a refused key from being sent again unless the
//! user asks. Only what the service said is kept, never a guess: a refusal of a sort of several
//! keys is put on a key only when every other key of it was accepted before.

use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};

/// What one listing's service said of keys.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct KeysTried {
    pub accepted: BTreeSet<String>,
    /// Refused keys, each with the service's words.
    pub refused: BTreeMap<String, String>,
}

/// How a key stands with a service.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KeyStanding<'a> {
    Accepted,
    /// Refused, in the service's words.
    Refused(&'a str),
    NotTried,
}

impl KeysTried {
    pub fn standing(&self, key: &str) -> KeyStanding<'_> {
        if let Some(words) = self.refused.get(key) {
            KeyStanding::Refused(words)
        } else if self.accepted.contains(key) {
            KeyStanding::Accepted
        } else {
            KeyStanding::NotTried
        }
    }

    /// A page sorted by `keys` came back: the service takes each of them.
    pub fn accept<'k>(&mut self, keys: impl IntoIterator<Item = &'k str>) {
        for key in keys {
            self.refused.remove(key);
            self.accepted.insert(key.to_owned());
        }
    }

    /// The service refused a sort by `keys` in `words`: the key it refused, when that can be
    /// told (the only key, or the only one not accepted before), is remembered and returned.
    pub fn refuse(&mut self, keys: &[&str], words: &str) -> Option<String> {
        let mut untried = keys.iter().filter(|k| !self.accepted.contains(**k));
        let blamed = match (untried.next(), untried.next()) {
            (Some(only), None) => *only,
            _ => return None,
        };
        self.refused.insert(blamed.to_owned(), words.to_owned());
        Some(blamed.to_owned())
    }

    /// The first of `keys` this service refused, with its words.
    pub fn first_refused<'k>(&self, keys: &[&'k str]) -> Option<(&'k str, &str)> {
        keys.iter()
            .find_map(|k| self.refused.get(*k).map(|words| (*k, words.as_str())))
    }

    pub fn is_empty(&self) -> bool {
        self.accepted.is_empty() && self.refused.is_empty()
    }
}

/// Per listing (`products`, `transactions`: the API's path segment).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct SortsTried {
    pub products: KeysTried,
    pub transactions: KeysTried,
}

impl SortsTried {
    /// The listing at `path` (`products` or `transactions`); `None` for another.
    pub fn listing(&self, path: &str) -> Option<&KeysTried> {
        match path {
            "products" => Some(&self.products),
            "transactions" => Some(&self.transactions),
            _ => None,
        }
    }

    pub fn listing_mut(&mut self, path: &str) -> Option<&mut KeysTried> {
        match path {
            "products" => Some(&mut self.products),
            "transactions" => Some(&mut self.transactions),
            _ => None,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.products.is_empty() && self.transactions.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refusal_is_put_only_on_a_key_that_can_be_told() {
        let mut tried = KeysTried::default();
        assert_eq!(tried.standing("name"), KeyStanding::NotTried);
        assert_eq!(tried.refuse(&["name", "status"], "no"), None, "which one?");
        tried.accept(["created"]);
        assert_eq!(
            tried.refuse(&["created", "name"], "sorting by 'name' is not supported"),
            Some("name".into())
        );
        assert_eq!(
            tried.standing("name"),
            KeyStanding::Refused("sorting by 'name' is not supported")
        );
        assert_eq!(tried.standing("created"), KeyStanding::Accepted);
        assert_eq!(
            tried.first_refused(&["created", "name"]),
            Some(("name", "sorting by 'name' is not supported"))
        );
        // Asked again and accepted this time (the service changed): accepted it is.
        tried.accept(["name"]);
        assert_eq!(tried.standing("name"), KeyStanding::Accepted);
        assert_eq!(tried.first_refused(&["name"]), None);
    }

    #[test]
    fn kept_as_json_and_absent_when_empty() {
        let mut tried = SortsTried::default();
        assert!(tried.is_empty());
        tried
            .listing_mut("transactions")
            .unwrap()
            .refuse(&["updated"], "no");
        let json = serde_json::to_value(&tried).unwrap();
        assert_eq!(json["transactions"]["refused"]["updated"], "no");
        let back: SortsTried = serde_json::from_value(json).unwrap();
        assert_eq!(back, tried);
        assert!(tried.listing("events").is_none());
    }
}
