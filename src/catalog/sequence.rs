//! A sequence's definition and the arithmetic of its values: what CREATE and ALTER
//! SEQUENCE accept (Oracle's rules and error numbers), and which values a session's cache
//! takes when it runs dry.
//!
//! `last_number` is Oracle's LAST_NUMBER: the first value no cache has taken. It is
//! written to the dictionary (durably) before any value below it is handed out, so after a
//! crash the sequence goes on from it: the values a cache held and never handed out are
//! skipped, and no value is ever given twice.
//!
//! Invariant: `min_value < max_value`, `increment_by != 0` and smaller than their distance,
//! and every number fits NUMBER(28).

use crate::error::{Error, Result};

/// The largest sequence value, as Oracle's NOMAXVALUE: 28 nines.
pub const MAX_SEQUENCE_VALUE: i128 = 9_999_999_999_999_999_999_999_999_999;

/// The smallest value of a descending sequence with NOMINVALUE, as Oracle's: -(10^27 - 1).
pub const MIN_DESCENDING_VALUE: i128 = -999_999_999_999_999_999_999_999_999;

/// The number of values a cache takes when CREATE SEQUENCE does not say (Oracle's).
pub const DEFAULT_CACHE: u32 = 20;

/// A stored sequence.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct SequenceDef {
    pub name: String,
    pub min_value: i128,
    pub max_value: i128,
    pub increment_by: i128,
    /// CYCLE: past its last value the sequence starts again at its first.
    pub cycle: bool,
    /// ORDER: kept for `user_sequences` (one instance orders its values anyway).
    pub order: bool,
    /// Values a cache takes at a time; 0 for NOCACHE.
    pub cache_size: u32,
    /// The first value no cache has taken (see the module doc); past the bound, by at
    /// most one increment, once the sequence is used up.
    pub last_number: i128,
    /// Whether a cache ever took values (ALTER ... INCREMENT BY then goes on from the value
    /// given last).
    #[serde(default)]
    pub used: bool,
    /// When the sequence was created (seconds since 1970).
    pub created: i64,
}

/// The options of CREATE or ALTER SEQUENCE, each `None` where the statement leaves it out.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SequenceOptions {
    pub increment_by: Option<i128>,
    pub start_with: Option<i128>,
    /// `MINVALUE n` (`Some(Some(n))`) or NOMINVALUE (`Some(None)`).
    pub min_value: Option<Option<i128>>,
    /// `MAXVALUE n` or NOMAXVALUE.
    pub max_value: Option<Option<i128>>,
    /// `CACHE n` or NOCACHE (`Some(0)`).
    pub cache: Option<u32>,
    pub cycle: Option<bool>,
    pub order: Option<bool>,
    /// ALTER's RESTART (its START WITH, if any, is `start_with`).
    pub restart: bool,
}

/// The values one cache takes: `count` values from `first`, `increment_by` apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CachedValues {
    pub first: i128,
    pub count: u64,
}

fn invalid(name: &str, message: String) -> Error {
    Error::InvalidValue { context: format!("sequence {name}"), message }
}

impl SequenceDef {
    /// The sequence CREATE SEQUENCE `name` with `options` makes, checked.
    pub fn create(name: String, options: &SequenceOptions, created: i64) -> Result<SequenceDef> {
        if options.restart {
            return Err(invalid(&name, "RESTART is an option of ALTER SEQUENCE".into()));
        }
        let increment_by = options.increment_by.unwrap_or(1);
        let ascending = increment_by > 0;
        let min_value = options.min_value.flatten().unwrap_or(if ascending { 1 } else { MIN_DESCENDING_VALUE });
        let max_value = options.max_value.flatten().unwrap_or(if ascending { MAX_SEQUENCE_VALUE } else { -1 });
        let start = options.start_with.unwrap_or(if ascending { min_value } else { max_value });
        let def = SequenceDef {
            name,
            min_value,
            max_value,
            increment_by,
            cycle: options.cycle.unwrap_or(false),
            order: options.order.unwrap_or(false),
            cache_size: options.cache.unwrap_or(DEFAULT_CACHE),
            last_number: start,
            used: false,
            created,
        };
        def.check()?;
        def.check_start()?;
        Ok(def)
    }

    /// Checks that the sequence starts inside its bounds.
    fn check_start(&self) -> Result<()> {
        if self.last_number < self.min_value {
            return Err(invalid(&self.name, "ORA-04006: START WITH cannot be less than MINVALUE".into()));
        }
        if self.last_number > self.max_value {
            return Err(invalid(&self.name, "ORA-04008: START WITH cannot be more than MAXVALUE".into()));
        }
        Ok(())
    }

    /// The sequence after ALTER SEQUENCE with `options`, whose next value would have been
    /// `next` (the first value its cache still held, or `last_number`): the altered
    /// sequence goes on from there (or from its start, on RESTART).
    pub fn altered(&self, options: &SequenceOptions, next: i128) -> Result<SequenceDef> {
        if options.start_with.is_some() && !options.restart {
            return Err(invalid(&self.name, "ORA-02283: cannot alter starting sequence number".into()));
        }
        let increment_by = options.increment_by.unwrap_or(self.increment_by);
        let ascending = increment_by > 0;
        let min_value = match options.min_value {
            None => self.min_value,
            Some(value) => value.unwrap_or(if ascending { 1 } else { MIN_DESCENDING_VALUE }),
        };
        let max_value = match options.max_value {
            None => self.max_value,
            Some(value) => value.unwrap_or(if ascending { MAX_SEQUENCE_VALUE } else { -1 }),
        };
        // As Oracle: a used sequence goes on from the value it gave last, by the new
        // increment (so `INCREMENT BY -n`, one NEXTVAL and `INCREMENT BY 1` set it back).
        let last_given = next - self.increment_by;
        let last_number = match (options.restart, options.start_with) {
            (true, Some(start)) => start,
            (true, None) => {
                if ascending {
                    min_value
                } else {
                    max_value
                }
            }
            (false, _) if self.used => last_given + increment_by,
            (false, _) => next,
        };
        let def = SequenceDef {
            name: self.name.clone(),
            min_value,
            max_value,
            increment_by,
            cycle: options.cycle.unwrap_or(self.cycle),
            order: options.order.unwrap_or(self.order),
            cache_size: options.cache.unwrap_or(self.cache_size),
            last_number,
            used: self.used && !options.restart,
            created: self.created,
        };
        def.check()?;
        if options.restart {
            def.check_start()?;
        } else {
            // The value the sequence gave last stays inside the new bounds (its next one
            // may lie past them: the sequence is then used up, or cycles).
            let next = last_number;
            if next > max_value && last_given > max_value {
                return Err(invalid(
                    &self.name,
                    "ORA-04009: MAXVALUE cannot be made to be less than the current value".into(),
                ));
            }
            if next < min_value && last_given < min_value {
                return Err(invalid(
                    &self.name,
                    "ORA-04007: MINVALUE cannot be made to exceed the current value".into(),
                ));
            }
        }
        Ok(def)
    }

    /// Checks the rules every definition keeps (see the module doc); the error names the
    /// rule's ORA number.
    pub fn check(&self) -> Result<()> {
        let in_range = |v: i128| (-MAX_SEQUENCE_VALUE..=MAX_SEQUENCE_VALUE).contains(&v);
        // A used-up sequence's LAST_NUMBER lies one increment past its bound.
        let past = self.increment_by.abs();
        let last_in_range = (-MAX_SEQUENCE_VALUE - past..=MAX_SEQUENCE_VALUE + past).contains(&self.last_number);
        if ![self.min_value, self.max_value, self.increment_by].into_iter().all(in_range) || !last_in_range {
            return Err(invalid(
                &self.name,
                "ORA-01426: numeric overflow (a sequence number has at most 28 digits)".into(),
            ));
        }
        if self.increment_by == 0 {
            return Err(invalid(&self.name, "ORA-04002: INCREMENT must be a non-zero integer".into()));
        }
        if self.min_value >= self.max_value {
            return Err(invalid(&self.name, "ORA-04004: MINVALUE must be less than MAXVALUE".into()));
        }
        if self.increment_by.abs() >= self.max_value - self.min_value {
            return Err(invalid(&self.name, "ORA-04005: INCREMENT must be less than MAXVALUE minus MINVALUE".into()));
        }
        if self.cache_size == 1 {
            return Err(invalid(&self.name, "ORA-04010: the number of values to CACHE must be greater than 1".into()));
        }
        if self.cycle && i128::from(self.cache_size) > self.cycle_length() {
            return Err(invalid(&self.name, "ORA-04013: number to CACHE must be less than one cycle".into()));
        }
        Ok(())
    }

    /// The number of values one cycle gives.
    fn cycle_length(&self) -> i128 {
        (self.max_value - self.min_value) / self.increment_by.abs() + 1
    }

    /// The values a cache takes next, and the `last_number` after it: from `last_number`
    /// (or, past the last value of a CYCLE sequence, from its first), up to `cache_size`
    /// values (one for NOCACHE) that do not pass the bound. A sequence past its bound
    /// without CYCLE has no more values (ORA-08004).
    pub fn take_values(&self) -> Result<(CachedValues, i128)> {
        let ascending = self.increment_by > 0;
        let mut first = self.last_number;
        // Outside the bounds on either side (an ALTER may have turned the sequence round).
        let past = first > self.max_value || first < self.min_value;
        if past {
            if !self.cycle {
                let bound = if ascending { "exceeds MAXVALUE" } else { "goes below MINVALUE" };
                return Err(invalid(
                    &self.name,
                    format!("ORA-08004: sequence {}.NEXTVAL {bound} and cannot be instantiated", self.name),
                ));
            }
            first = if ascending { self.min_value } else { self.max_value };
        }
        let room = if ascending { self.max_value - first } else { first - self.min_value };
        let left = room / self.increment_by.abs() + 1;
        let count = i128::from(self.cache_size.max(1)).min(left);
        let last_number = first + count * self.increment_by;
        Ok((CachedValues { first, count: count as u64 }, last_number))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn options(f: impl FnOnce(&mut SequenceOptions)) -> SequenceOptions {
        let mut o = SequenceOptions::default();
        f(&mut o);
        o
    }

    fn error_of(r: Result<SequenceDef>) -> String {
        r.expect_err("refused").to_string()
    }

    #[test]
    fn defaults_are_oracles() {
        let up = SequenceDef::create("S".into(), &SequenceOptions::default(), 0).unwrap();
        assert_eq!((up.min_value, up.max_value, up.increment_by, up.cache_size), (1, MAX_SEQUENCE_VALUE, 1, 20));
        assert_eq!(up.last_number, 1);
        let down = SequenceDef::create("D".into(), &options(|o| o.increment_by = Some(-1)), 0).unwrap();
        assert_eq!((down.min_value, down.max_value, down.last_number), (MIN_DESCENDING_VALUE, -1, -1));
    }

    #[test]
    fn bad_definitions_name_their_rule() {
        let cases: [(SequenceOptions, &str); 7] = [
            (options(|o| o.increment_by = Some(0)), "ORA-04002"),
            (options(|o| (o.min_value, o.start_with) = (Some(Some(10)), Some(5))), "ORA-04006"),
            (options(|o| o.max_value = Some(Some(1))), "ORA-04004"),
            (options(|o| (o.max_value, o.increment_by) = (Some(Some(5)), Some(4))), "ORA-04005"),
            (options(|o| o.cache = Some(1)), "ORA-04010"),
            (options(|o| (o.max_value, o.cycle) = (Some(Some(10)), Some(true))), "ORA-04013"),
            (options(|o| o.start_with = Some(MAX_SEQUENCE_VALUE + 2)), "ORA-01426"),
        ];
        for (o, code) in cases {
            let message = error_of(SequenceDef::create("S".into(), &o, 0));
            assert!(message.contains(code), "{o:?}: {message}");
        }
    }

    #[test]
    fn a_cache_takes_values_up_to_the_bound_then_cycles_or_stops() {
        let o = options(|o| {
            (o.max_value, o.cache, o.increment_by, o.start_with) = (Some(Some(10)), Some(4), Some(3), Some(2))
        });
        let mut s = SequenceDef::create("S".into(), &o, 0).unwrap();
        let (values, last) = s.take_values().unwrap();
        assert_eq!((values, last), (CachedValues { first: 2, count: 3 }, 11));
        s.last_number = last;
        assert!(s.take_values().unwrap_err().to_string().contains("ORA-08004"));
        s.cycle = true;
        s.cache_size = 2;
        assert_eq!(s.take_values().unwrap(), (CachedValues { first: 1, count: 2 }, 7));
        let nocache = SequenceDef { cache_size: 0, last_number: 5, ..s };
        assert_eq!(nocache.take_values().unwrap(), (CachedValues { first: 5, count: 1 }, 8));
    }

    #[test]
    fn a_descending_sequence_goes_down_to_its_minimum() {
        let o = options(|o| {
            (o.increment_by, o.min_value, o.max_value, o.cache) = (Some(-5), Some(Some(-12)), Some(Some(0)), Some(0))
        });
        let s = SequenceDef::create("D".into(), &o, 0).unwrap();
        assert_eq!(s.last_number, 0);
        let s = SequenceDef { last_number: -10, ..s };
        assert_eq!(s.take_values().unwrap(), (CachedValues { first: -10, count: 1 }, -15));
        let s = SequenceDef { last_number: -15, ..s };
        assert!(s.take_values().unwrap_err().to_string().contains("goes below MINVALUE"));
    }

    #[test]
    fn alter_keeps_the_next_value_inside_the_new_bounds() {
        let s = SequenceDef::create("S".into(), &SequenceOptions::default(), 0).unwrap();
        let altered = s.altered(&options(|o| o.increment_by = Some(10)), 41).unwrap();
        assert_eq!((altered.last_number, altered.increment_by), (41, 10), "unused: goes on from its next value");
        let used = SequenceDef { used: true, ..s.clone() };
        let altered = used.altered(&options(|o| o.increment_by = Some(10)), 41).unwrap();
        assert_eq!(altered.last_number, 50, "used: the value given last (40) plus the new increment");
        let back = used.altered(&options(|o| o.increment_by = Some(-39)), 41).unwrap();
        assert_eq!(back.last_number, 1, "INCREMENT BY -(n - 1) sets a used sequence back to 1");
        assert!(error_of(used.altered(&options(|o| o.max_value = Some(Some(30))), 41)).contains("ORA-04009"));
        assert!(error_of(s.altered(&options(|o| o.start_with = Some(5)), 41)).contains("ORA-02283"));
        let restarted = s.altered(&options(|o| (o.restart, o.start_with) = (true, Some(7))), 41).unwrap();
        assert_eq!(restarted.last_number, 7);
        assert_eq!(s.altered(&options(|o| o.restart = true), 41).unwrap().last_number, 1);
    }

    #[test]
    fn a_used_up_sequence_stays_valid_and_a_turned_round_one_stops_at_its_bound() {
        let o = options(|o| o.start_with = Some(MAX_SEQUENCE_VALUE - 1));
        let mut s = SequenceDef::create("S".into(), &o, 0).unwrap();
        let (values, last) = s.take_values().unwrap();
        assert_eq!((values.first, values.count, last), (MAX_SEQUENCE_VALUE - 1, 2, MAX_SEQUENCE_VALUE + 1));
        s.last_number = last;
        s.check().expect("a used-up sequence is a valid definition");
        assert!(s.take_values().unwrap_err().to_string().contains("ORA-08004"));
        let up = SequenceDef { max_value: 100, last_number: 101, ..s.clone() };
        let down = SequenceDef { increment_by: -1, ..up };
        assert!(down.take_values().unwrap_err().to_string().contains("ORA-08004"));
    }

    #[test]
    fn definitions_round_trip_through_json_with_28_digits() {
        let s = SequenceDef::create("S".into(), &options(|o| o.start_with = Some(MAX_SEQUENCE_VALUE - 1)), 0).unwrap();
        let text = serde_json::to_string(&s).unwrap();
        assert_eq!(serde_json::from_str::<SequenceDef>(&text).unwrap(), s);
    }
}
