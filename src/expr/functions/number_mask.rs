//! Number format masks: TO_CHAR of a number and TO_NUMBER.

use super::*;

/// Where a number format puts the sign.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum SignMode {
    /// '-' before the first digit, a blank for positive numbers (no blank with FM).
    Default,
    /// S at the start: '+' or '-' before the number.
    Leading,
    /// S at the end: '+' or '-' after the number.
    Trailing,
    /// MI at the end: '-' or a blank after the number.
    TrailingMinus,
}

/// A position left of the decimal point.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum IntPosition {
    /// '9': a digit, blank when a leading zero.
    Nine,
    /// '0': a digit, also when a leading zero (and every position right of it).
    Zero,
    /// ',' or 'G': shown only between shown digits.
    Group,
}

/// A parsed number format: FM, $, S, MI, 9, 0, ',', 'G', '.', 'D', and TM / TM9.
#[derive(Debug, Clone)]
pub(super) struct NumberMask {
    pub(super) fill_mode: bool,
    dollar: bool,
    /// TM or TM9: the shortest text, as TO_CHAR without a format.
    text_minimum: bool,
    sign: SignMode,
    int: Vec<IntPosition>,
    point: bool,
    /// Positions right of the point: true for '0', false for '9'.
    frac: Vec<bool>,
}

impl NumberMask {
    pub(super) fn parse(mask: &str, name: &str) -> Result<NumberMask> {
        let upper = mask.trim().to_ascii_uppercase();
        let invalid = || Error::value(name, format!("invalid number format model '{mask}'"));
        let mut m = NumberMask {
            fill_mode: false,
            dollar: false,
            text_minimum: false,
            sign: SignMode::Default,
            int: Vec::new(),
            point: false,
            frac: Vec::new(),
        };
        let body = match upper.strip_prefix("FM") {
            Some(rest) => {
                m.fill_mode = true;
                rest
            }
            None => upper.as_str(),
        };
        if body == "TM" || body == "TM9" {
            m.text_minimum = true;
            return Ok(m);
        }
        let bytes = body.as_bytes();
        let mut i = 0;
        while let Some(&b) = bytes.get(i) {
            let at_end = i + 1 == bytes.len();
            let has_digits = m.point || m.int.iter().any(|p| *p != IntPosition::Group);
            match b {
                b'9' | b'0' if m.point => m.frac.push(b == b'0'),
                b'9' => m.int.push(IntPosition::Nine),
                b'0' => m.int.push(IntPosition::Zero),
                b',' | b'G' if !m.point && has_digits => m.int.push(IntPosition::Group),
                b'.' | b'D' if !m.point => m.point = true,
                b'$' if !m.dollar => m.dollar = true,
                b'S' if m.sign == SignMode::Default && !has_digits => m.sign = SignMode::Leading,
                b'S' if m.sign == SignMode::Default && at_end => m.sign = SignMode::Trailing,
                b'M' if m.sign == SignMode::Default && bytes.get(i + 1) == Some(&b'I') && i + 2 == bytes.len() => {
                    m.sign = SignMode::TrailingMinus;
                    i += 1;
                }
                _ => return Err(invalid()),
            }
            i += 1;
        }
        if m.frac.is_empty() && !m.int.iter().any(|p| *p != IntPosition::Group) {
            return Err(invalid());
        }
        Ok(m)
    }

    /// Width of the result without FM, which is also the width of the '#' overflow string.
    pub(super) fn width(&self) -> usize {
        self.int.len() + usize::from(self.point) + self.frac.len() + usize::from(self.dollar) + 1
    }

    pub(super) fn format(&self, d: Decimal) -> String {
        if self.text_minimum {
            return Datum::from_decimal(d).to_string();
        }
        let scale = u32::try_from(self.frac.len().min(28)).unwrap_or(28);
        let rounded = d.round_dp_with_strategy(scale, RoundingStrategy::MidpointAwayFromZero);
        let negative = rounded.is_sign_negative() && !rounded.is_zero();
        let plain = rounded.abs().normalize().to_string();
        let (int_digits, frac_digits) = plain.split_once('.').unwrap_or((plain.as_str(), ""));
        let int_digits: Vec<char> = if int_digits == "0" { Vec::new() } else { int_digits.chars().collect() };
        let positions = self.int.iter().filter(|p| **p != IntPosition::Group).count();
        if int_digits.len() > positions {
            return "#".repeat(self.width());
        }

        // Left of the point: digits right-aligned, leading zeros where a '0' asks for them.
        let first_zero = self.int.iter().position(|p| *p == IntPosition::Zero);
        let mut shown: Vec<Option<char>> = vec![None; self.int.len()];
        let mut k = 0;
        for (i, position) in self.int.iter().enumerate().rev() {
            if *position == IntPosition::Group {
                continue;
            }
            shown[i] = match int_digits.len().checked_sub(k + 1) {
                Some(j) => int_digits.get(j).copied(),
                None if first_zero.is_some_and(|z| i >= z) => Some('0'),
                None => None,
            };
            k += 1;
        }
        if int_digits.is_empty() && self.frac.is_empty() && shown.iter().all(Option::is_none) {
            // Zero with no decimals shows one '0' in the last digit position.
            if let Some(last) = self.int.iter().rposition(|p| *p != IntPosition::Group) {
                shown[last] = Some('0');
            }
        }
        for i in 0..self.int.len() {
            if self.int[i] == IntPosition::Group && shown[..i].iter().any(Option::is_some) {
                shown[i] = Some(',');
            }
        }
        let blanks = shown.iter().filter(|c| c.is_none()).count();
        let mut body: String = shown.iter().flatten().collect();

        // Right of the point: rounded digits, padded with zeros; FM drops trailing '9' zeros.
        if self.point {
            let mut frac: Vec<char> = frac_digits.chars().chain(std::iter::repeat('0')).take(self.frac.len()).collect();
            if self.fill_mode {
                while frac.last() == Some(&'0') && self.frac.get(frac.len() - 1) == Some(&false) {
                    frac.pop();
                }
            }
            body.push('.');
            body.extend(frac);
        }

        let sign = if negative { "-" } else { "+" };
        let quiet_sign = if negative {
            "-"
        } else if self.fill_mode {
            ""
        } else {
            " "
        };
        let (before, after) = match self.sign {
            SignMode::Default => (quiet_sign, ""),
            SignMode::Leading => (sign, ""),
            SignMode::Trailing => ("", sign),
            SignMode::TrailingMinus => ("", quiet_sign),
        };
        let padding = if self.fill_mode { String::new() } else { " ".repeat(blanks) };
        let dollar = if self.dollar { "$" } else { "" };
        format!("{padding}{before}{dollar}{body}{after}")
    }

    /// Reads `text` written with this mask (group separators, '$' and a trailing sign).
    pub(super) fn read(&self, text: &str, name: &str) -> Result<Value> {
        let invalid = || Error::value(name, format!("invalid number '{text}'"));
        let has_group = self.int.contains(&IntPosition::Group);
        let mut cleaned: String =
            text.trim().chars().filter(|&c| !((has_group && c == ',') || (self.dollar && c == '$'))).collect();
        if matches!(self.sign, SignMode::Trailing | SignMode::TrailingMinus) {
            if let Some(rest) = cleaned.strip_suffix('-') {
                cleaned = format!("-{rest}");
            } else if let Some(rest) = cleaned.strip_suffix('+') {
                cleaned = rest.to_string();
            }
        }
        let value = Datum::parse_number(cleaned.trim()).map_err(|_| invalid())?;
        if self.text_minimum {
            return Ok(value);
        }
        let d = value.to_decimal(name)?.unwrap_or_default();
        if d.normalize().scale() as usize > self.frac.len() || self.format(d).starts_with('#') {
            return Err(invalid());
        }
        Ok(value)
    }
}
