//! The functions against Oracle's documented results, and their invariants by property.

use super::*;
use crate::types::format_date;
use proptest::prelude::*;
use std::str::FromStr;

fn ctx() -> FunctionContext {
    // 2024-03-15 10:30:00
    FunctionContext::new(parse_date("2024-03-15 10:30:00", None).unwrap() * 1_000_000, 42)
}

fn call(name: &str, args: &[Value]) -> Result<Value> {
    ScalarFunction::lookup(name, args.len())?.call(args, &mut ctx())
}

fn ok(name: &str, args: &[Value]) -> Value {
    call(name, args).unwrap_or_else(|e| panic!("{name}({args:?}): {e}"))
}

fn err(name: &str, args: &[Value]) -> String {
    match call(name, args) {
        Ok(v) => panic!("{name}({args:?}) gave {v:?}, expected an error"),
        Err(e) => e.to_string(),
    }
}

fn s(x: &str) -> Value {
    Datum::string(x.to_string())
}

fn n(x: &str) -> Value {
    Datum::parse_number(x).unwrap()
}

fn i(x: i64) -> Value {
    Datum::Int(x)
}

fn date(x: &str) -> Value {
    Datum::Date(parse_date(x, None).unwrap())
}

fn ts(x: &str) -> Value {
    Datum::Timestamp(crate::types::datetime::parse_timestamp(x).unwrap())
}

const NULL_V: Value = Datum::Null;

fn arith(op: ArithOp, a: Value, b: Value) -> Value {
    arithmetic(op, &a, &b).unwrap()
}

// ---- catalog ----

#[test]
fn lookup_is_case_insensitive_and_checks_arity() {
    assert_eq!(ScalarFunction::lookup("substr", 2).unwrap(), ScalarFunction::Substr);
    assert_eq!(ScalarFunction::lookup("dbms_random.value", 0).unwrap(), ScalarFunction::RandomValue);
    assert_eq!(ScalarFunction::lookup("DBMS_Random.String", 2).unwrap(), ScalarFunction::RandomString);
    assert!(matches!(
        ScalarFunction::lookup("nosuch", 1),
        Err(Error::UnknownObject { kind: "function", ref name }) if name == "NOSUCH"
    ));
    assert_eq!(ScalarFunction::lookup("rpad", 1).unwrap_err().to_string(), "RPAD: expects 2 or 3 arguments, got 1");
    assert_eq!(ScalarFunction::lookup("upper", 2).unwrap_err().to_string(), "UPPER: expects 1 argument, got 2");
    assert_eq!(ScalarFunction::lookup("mod", 3).unwrap_err().to_string(), "MOD: expects 2 arguments, got 3");
    assert_eq!(ScalarFunction::lookup("instr", 5).unwrap_err().to_string(), "INSTR: expects 2 to 4 arguments, got 5");
    assert_eq!(
        ScalarFunction::lookup("decode", 2).unwrap_err().to_string(),
        "DECODE: expects at least 3 arguments, got 2"
    );
    assert!(ScalarFunction::lookup("dbms_random.value", 1).is_err());
    assert!(ScalarFunction::lookup("coalesce", 1).is_err());
    assert!(ScalarFunction::lookup("greatest", 5).is_ok());
}

#[test]
fn every_function_is_listed_once_under_its_name() {
    let mut names: Vec<&str> = ALL_FUNCTIONS.iter().map(|f| f.name()).collect();
    for &f in ALL_FUNCTIONS {
        match f.is_syntax() {
            // EXTRACT is the binder's: no statement calls it by name.
            true => assert!(ScalarFunction::lookup(f.name(), minimal_arity(f)).is_err(), "{}", f.name()),
            false => assert_eq!(ScalarFunction::lookup(f.name(), minimal_arity(f)).unwrap(), f),
        }
        assert_eq!(f.name(), f.name().to_ascii_uppercase());
    }
    names.sort_unstable();
    names.dedup();
    assert_eq!(names.len(), ALL_FUNCTIONS.len());
    assert!(!ScalarFunction::RandomValue.is_deterministic());
    assert!(!ScalarFunction::RandomString.is_deterministic());
    assert!(ScalarFunction::OraHash.is_deterministic());
}

fn minimal_arity(f: ScalarFunction) -> usize {
    (0..10).find(|n| f.arity().accepts(*n)).unwrap()
}

#[test]
fn call_checks_arity_and_never_indexes_out_of_bounds() {
    for &f in ALL_FUNCTIONS {
        for count in 0..6 {
            let args = vec![Datum::Null; count];
            let result = f.call(&args, &mut ctx());
            if !f.arity().accepts(count) {
                assert!(result.is_err(), "{} with {count} arguments", f.name());
            }
        }
    }
}

// ---- operators ----

#[test]
fn integer_arithmetic_is_exact_and_overflows_into_decimal() {
    assert_eq!(arith(ArithOp::Add, i(2), i(3)), i(5));
    assert_eq!(arith(ArithOp::Sub, i(2), i(3)), i(-1));
    assert_eq!(arith(ArithOp::Mul, i(4), i(-3)), i(-12));
    assert_eq!(arith(ArithOp::Add, i(i64::MAX), i(1)), n("9223372036854775808"));
    assert_eq!(arith(ArithOp::Mul, i(i64::MAX), i(-2)), n("-18446744073709551614"));
    assert_eq!(arith(ArithOp::Sub, i(i64::MIN), i(1)), n("-9223372036854775809"));
    assert!(arithmetic(ArithOp::Mul, &i(i64::MAX), &i(i64::MAX)).is_err());
    let e = arithmetic(ArithOp::Mul, &n("100000000000000000000"), &n("100000000000000000000")).unwrap_err();
    assert_eq!(e.to_string(), "arithmetic: numeric overflow");
}

#[test]
fn division_is_exact_decimal() {
    assert_eq!(arith(ArithOp::Div, i(6), i(3)), i(2));
    assert_eq!(arith(ArithOp::Div, i(1), i(4)), n("0.25"));
    assert_eq!(arith(ArithOp::Div, i(1), i(3)), n("0.3333333333333333333333333333"));
    assert_eq!(arith(ArithOp::Div, n("7.5"), n("2.5")), i(3));
    let e = arithmetic(ArithOp::Div, &i(1), &i(0)).unwrap_err().to_string();
    assert_eq!(e, "arithmetic: divisor is equal to zero");
    assert!(arithmetic(ArithOp::Div, &n("1.5"), &s("0")).is_err());
}

#[test]
fn arithmetic_converts_strings_and_propagates_null() {
    assert_eq!(arith(ArithOp::Add, s("2"), i(3)), i(5));
    assert_eq!(arith(ArithOp::Mul, s(" 1.5 "), s("2")), i(3));
    assert_eq!(arith(ArithOp::Add, NULL_V, i(3)), NULL_V);
    assert_eq!(arith(ArithOp::Div, i(3), NULL_V), NULL_V);
    assert_eq!(arith(ArithOp::Div, NULL_V, i(0)), NULL_V);
    let e = arithmetic(ArithOp::Add, &s("abc"), &i(1)).unwrap_err().to_string();
    assert_eq!(e, "arithmetic: invalid number 'abc'");
}

#[test]
fn date_arithmetic_counts_days() {
    let d = date("2024-01-31 12:00:00");
    assert_eq!(arith(ArithOp::Add, d.clone(), i(1)), date("2024-02-01 12:00:00"));
    assert_eq!(arith(ArithOp::Add, i(1), d.clone()), date("2024-02-01 12:00:00"));
    assert_eq!(arith(ArithOp::Sub, d.clone(), n("0.5")), date("2024-01-31 00:00:00"));
    assert_eq!(arith(ArithOp::Add, d.clone(), s("0.25")), date("2024-01-31 18:00:00"));
    // 1/3 day = 28800 s exactly after rounding
    assert_eq!(arith(ArithOp::Add, d.clone(), arith(ArithOp::Div, i(1), i(3))), date("2024-01-31 20:00:00"));
    assert_eq!(arith(ArithOp::Sub, date("2024-03-01"), date("2024-02-01")), i(29));
    assert_eq!(arith(ArithOp::Sub, date("2024-03-01 12:00:00"), date("2024-03-01")), n("0.5"));
    assert!(arithmetic(ArithOp::Add, &d, &d).is_err());
    assert!(arithmetic(ArithOp::Mul, &d, &i(2)).is_err());
    assert!(arithmetic(ArithOp::Sub, &i(2), &d).is_err());
    assert!(arithmetic(ArithOp::Add, &d, &i(5_000_000)).unwrap_err().to_string().contains("date out of range"));
    assert!(arithmetic(ArithOp::Add, &d, &i(i64::MAX)).is_err());
    assert!(arithmetic(ArithOp::Sub, &d, &n("1e27")).is_err());
}

#[test]
fn concat_treats_null_as_empty() {
    assert_eq!(concat(&s("ab"), &s("cd")), s("abcd"));
    assert_eq!(concat(&NULL_V, &s("cd")), s("cd"));
    assert_eq!(concat(&s("ab"), &NULL_V), s("ab"));
    assert_eq!(concat(&NULL_V, &NULL_V), NULL_V);
    assert_eq!(concat(&i(1), &n("2.5")), s("12.5"));
    assert_eq!(concat(&s("d="), &date("2024-01-02")), s("d=2024-01-02 00:00:00"));
    assert_eq!(ok("CONCAT", &[NULL_V, s("x")]), s("x"));
}

#[test]
fn negate_numbers() {
    assert_eq!(negate(&i(5)).unwrap(), i(-5));
    assert_eq!(negate(&i(i64::MIN)).unwrap(), n("9223372036854775808"));
    assert_eq!(negate(&n("1.5")).unwrap(), n("-1.5"));
    assert_eq!(negate(&s("2")).unwrap(), i(-2));
    assert_eq!(negate(&NULL_V).unwrap(), NULL_V);
    assert!(negate(&date("2024-01-01")).is_err());
    assert!(negate(&s("x")).is_err());
}

// ---- strings ----

#[test]
fn pads() {
    assert_eq!(ok("RPAD", &[s("ab"), i(5)]), s("ab   "));
    assert_eq!(ok("LPAD", &[s("ab"), i(5), s("xy")]), s("xyxab"));
    assert_eq!(ok("RPAD", &[s("ab"), i(5), s("xy")]), s("abxyx"));
    assert_eq!(ok("LPAD", &[s("abcdef"), i(3)]), s("abc"));
    assert_eq!(ok("RPAD", &[s("abcdef"), i(3)]), s("abc"));
    assert_eq!(ok("LPAD", &[i(7), i(3), s("0")]), s("007"));
    assert_eq!(ok("LPAD", &[s("héllo"), i(7), s("é")]), s("ééhéllo"));
    assert_eq!(ok("LPAD", &[s("ab"), i(9), s("xyz")]), s("xyzxyzxab"));
    assert_eq!(ok("RPAD", &[s("ab"), i(7), s("xyz")]), s("abxyzxy"));
    assert_eq!(ok("RPAD", &[s("ab"), i(6), s("é")]), s("abéééé"));
    assert_eq!(ok("LPAD", &[s("ab"), i(0)]), NULL_V);
    assert_eq!(ok("LPAD", &[s("ab"), i(-3)]), NULL_V);
    assert_eq!(ok("LPAD", &[s("ab"), n("2.9")]), s("ab"));
    assert_eq!(ok("LPAD", &[NULL_V, i(3)]), NULL_V);
    assert_eq!(ok("LPAD", &[s("a"), NULL_V]), NULL_V);
    assert_eq!(ok("LPAD", &[s("a"), i(3), NULL_V]), NULL_V);
    assert!(err("RPAD", &[s("a"), i(1_000_000_000_000)]).starts_with("RPAD:"));
}

#[test]
fn substrings() {
    assert_eq!(ok("SUBSTR", &[s("abcdef"), i(2), i(3)]), s("bcd"));
    assert_eq!(ok("SUBSTR", &[s("abcdef"), i(0), i(2)]), s("ab"));
    assert_eq!(ok("SUBSTR", &[s("abcdef"), i(1)]), s("abcdef"));
    assert_eq!(ok("SUBSTR", &[s("abcdef"), i(-2)]), s("ef"));
    assert_eq!(ok("SUBSTR", &[s("abcdef"), i(-3), i(2)]), s("de"));
    assert_eq!(ok("SUBSTR", &[s("abcdef"), i(-7)]), NULL_V);
    assert_eq!(ok("SUBSTR", &[s("abcdef"), i(7)]), NULL_V);
    assert_eq!(ok("SUBSTR", &[s("abcdef"), i(2), i(0)]), NULL_V);
    assert_eq!(ok("SUBSTR", &[s("abcdef"), i(2), i(-1)]), NULL_V);
    assert_eq!(ok("SUBSTR", &[s("abcdef"), i(5), i(100)]), s("ef"));
    assert_eq!(ok("SUBSTR", &[s("abcdef"), n("2.7"), n("1.9")]), s("b"));
    assert_eq!(ok("SUBSTR", &[s("abcdef"), i(2), n("79228162514264337593543950335")]), s("bcdef"));
    assert_eq!(ok("SUBSTR", &[s("żółw"), i(2), i(2)]), s("ół"));
    assert_eq!(ok("SUBSTR", &[i(12345), i(2), i(3)]), s("234"));
    assert_eq!(ok("SUBSTR", &[NULL_V, i(1)]), NULL_V);
    assert_eq!(ok("SUBSTR", &[s("abc"), NULL_V]), NULL_V);
    assert_eq!(ok("SUBSTR", &[s("abc"), i(1), NULL_V]), NULL_V);
    assert_eq!(ok("SUBSTR", &[s("abc"), i(i64::MIN), i(i64::MAX)]), NULL_V);
}

#[test]
fn case_length_and_trims() {
    assert_eq!(ok("UPPER", &[s("aBc")]), s("ABC"));
    assert_eq!(ok("LOWER", &[s("ÀBC")]), s("àbc"));
    assert_eq!(ok("UPPER", &[NULL_V]), NULL_V);
    assert_eq!(ok("LENGTH", &[s("héllo")]), i(5));
    assert_eq!(ok("LENGTH", &[i(-120)]), i(4));
    assert_eq!(ok("LENGTH", &[NULL_V]), NULL_V);
    assert_eq!(ok("TRIM", &[s("  a b  ")]), s("a b"));
    assert_eq!(ok("TRIM", &[s("   ")]), NULL_V);
    assert_eq!(ok("LTRIM", &[s("  ab  ")]), s("ab  "));
    assert_eq!(ok("RTRIM", &[s("  ab  ")]), s("  ab"));
    assert_eq!(ok("LTRIM", &[s("xxyabcx"), s("xy")]), s("abcx"));
    assert_eq!(ok("RTRIM", &[s("xabcxyx"), s("xy")]), s("xabc"));
    assert_eq!(ok("RTRIM", &[s("xyx"), s("xy")]), NULL_V);
    assert_eq!(ok("LTRIM", &[s("abc"), NULL_V]), NULL_V);
    assert_eq!(ok("TRIM", &[NULL_V]), NULL_V);
}

#[test]
fn instr_finds_characters() {
    assert_eq!(ok("INSTR", &[s("hello world"), s("o")]), i(5));
    assert_eq!(ok("INSTR", &[s("hello world"), s("o"), i(6)]), i(8));
    assert_eq!(ok("INSTR", &[s("hello world"), s("o"), i(1), i(2)]), i(8));
    assert_eq!(ok("INSTR", &[s("hello world"), s("o"), i(1), i(3)]), i(0));
    assert_eq!(ok("INSTR", &[s("abcabc"), s("c"), i(-1)]), i(6));
    assert_eq!(ok("INSTR", &[s("abcabc"), s("bc"), i(-1)]), i(5));
    assert_eq!(ok("INSTR", &[s("abcabc"), s("bc"), i(-1), i(2)]), i(2));
    assert_eq!(ok("INSTR", &[s("abcabc"), s("a"), i(-10)]), i(0));
    assert_eq!(ok("INSTR", &[s("aaa"), s("aa"), i(1), i(2)]), i(2));
    assert_eq!(ok("INSTR", &[s("żółw"), s("w")]), i(4));
    assert_eq!(ok("INSTR", &[s("abc"), s("abcd")]), i(0));
    assert_eq!(ok("INSTR", &[s("abc"), s("b"), i(0)]), i(0));
    assert_eq!(ok("INSTR", &[s("abc"), s("b"), i(100)]), i(0));
    assert_eq!(ok("INSTR", &[s("abc"), NULL_V]), NULL_V);
    assert_eq!(ok("INSTR", &[NULL_V, s("a")]), NULL_V);
    assert!(err("INSTR", &[s("abc"), s("b"), i(1), i(0)]).contains("out of range"));
}

#[test]
fn replace_chr_ascii() {
    assert_eq!(ok("REPLACE", &[s("banana"), s("an"), s("AN")]), s("bANANa"));
    assert_eq!(ok("REPLACE", &[s("banana"), s("a")]), s("bnn"));
    assert_eq!(ok("REPLACE", &[s("banana"), s("a"), NULL_V]), s("bnn"));
    assert_eq!(ok("REPLACE", &[s("banana"), NULL_V, s("x")]), s("banana"));
    assert_eq!(ok("REPLACE", &[s("aaa"), s("a")]), NULL_V);
    assert_eq!(ok("REPLACE", &[NULL_V, s("a")]), NULL_V);
    assert_eq!(ok("CHR", &[i(65)]), s("A"));
    assert_eq!(ok("CHR", &[i(50089)]), s("é"));
    assert_eq!(ok("CHR", &[NULL_V]), NULL_V);
    assert!(err("CHR", &[i(-1)]).starts_with("CHR:"));
    assert!(err("CHR", &[i(200)]).starts_with("CHR:"));
    assert!(err("CHR", &[i(i64::MAX)]).starts_with("CHR:"));
    assert_eq!(ok("ASCII", &[s("Abc")]), i(65));
    assert_eq!(ok("ASCII", &[s("é")]), i(50089));
    assert_eq!(ok("ASCII", &[NULL_V]), NULL_V);
    assert_eq!(ok("CHR", &[ok("ASCII", &[s("€")])]), s("€"));
}

// ---- numbers ----

#[test]
fn modulo_follows_oracle() {
    assert_eq!(ok("MOD", &[i(11), i(4)]), i(3));
    assert_eq!(ok("MOD", &[i(-11), i(4)]), i(-3));
    assert_eq!(ok("MOD", &[i(11), i(-4)]), i(3));
    assert_eq!(ok("MOD", &[i(11), i(0)]), i(11));
    assert_eq!(ok("MOD", &[i(i64::MIN), i(-1)]), i(0));
    assert_eq!(ok("MOD", &[n("10.5"), i(3)]), n("1.5"));
    assert_eq!(ok("MOD", &[n("-10.5"), i(3)]), n("-1.5"));
    assert_eq!(ok("MOD", &[n("10.5"), i(0)]), n("10.5"));
    assert_eq!(ok("MOD", &[s("7"), i(2)]), i(1));
    assert_eq!(ok("MOD", &[NULL_V, i(2)]), NULL_V);
    assert_eq!(ok("MOD", &[i(2), NULL_V]), NULL_V);
    assert!(err("MOD", &[s("x"), i(2)]).contains("invalid number"));
}

#[test]
fn abs_sign_floor_ceil() {
    assert_eq!(ok("ABS", &[i(-3)]), i(3));
    assert_eq!(ok("ABS", &[i(i64::MIN)]), n("9223372036854775808"));
    assert_eq!(ok("ABS", &[n("-1.5")]), n("1.5"));
    assert_eq!(ok("ABS", &[NULL_V]), NULL_V);
    assert_eq!(ok("SIGN", &[n("-0.1")]), i(-1));
    assert_eq!(ok("SIGN", &[i(0)]), i(0));
    assert_eq!(ok("SIGN", &[i(7)]), i(1));
    assert_eq!(ok("SIGN", &[NULL_V]), NULL_V);
    assert_eq!(ok("FLOOR", &[n("-1.5")]), i(-2));
    assert_eq!(ok("FLOOR", &[n("1.5")]), i(1));
    assert_eq!(ok("CEIL", &[n("1.2")]), i(2));
    assert_eq!(ok("CEIL", &[n("-1.2")]), i(-1));
    assert_eq!(ok("CEIL", &[i(4)]), i(4));
    assert_eq!(ok("FLOOR", &[NULL_V]), NULL_V);
    assert!(err("ABS", &[date("2024-01-01")]).starts_with("ABS:"));
}

#[test]
fn round_and_trunc_numbers() {
    assert_eq!(ok("ROUND", &[n("2.5")]), i(3));
    assert_eq!(ok("ROUND", &[n("-2.5")]), i(-3));
    assert_eq!(ok("ROUND", &[n("1.2345"), i(2)]), n("1.23"));
    assert_eq!(ok("ROUND", &[n("1.235"), i(2)]), n("1.24"));
    assert_eq!(ok("TRUNC", &[n("1.239"), i(2)]), n("1.23"));
    assert_eq!(ok("TRUNC", &[n("-1.9")]), i(-1));
    assert_eq!(ok("ROUND", &[i(1250), i(-2)]), i(1300));
    assert_eq!(ok("ROUND", &[i(1249), i(-2)]), i(1200));
    assert_eq!(ok("ROUND", &[n("1249.99"), i(-2)]), i(1200));
    assert_eq!(ok("ROUND", &[n("-1250"), i(-2)]), i(-1300));
    assert_eq!(ok("TRUNC", &[n("1299.9"), i(-2)]), i(1200));
    assert_eq!(ok("TRUNC", &[n("-1299.9"), i(-2)]), i(-1200));
    assert_eq!(ok("ROUND", &[n("555"), i(-3)]), i(1000));
    assert_eq!(ok("ROUND", &[n("555"), i(-4)]), i(0));
    assert_eq!(ok("ROUND", &[n("555"), i(-40)]), i(0));
    assert_eq!(ok("ROUND", &[n("1.5"), i(40)]), n("1.5"));
    assert_eq!(ok("ROUND", &[i(17), i(2)]), i(17));
    assert_eq!(ok("ROUND", &[s("2.5")]), i(3));
    assert_eq!(ok("ROUND", &[NULL_V]), NULL_V);
    assert_eq!(ok("ROUND", &[i(1), NULL_V]), NULL_V);
    assert!(err("ROUND", &[n("79228162514264337593543950335"), i(-28)]).contains("numeric overflow"));
    assert_eq!(ok("ROUND", &[n("49228162514264337593543950335"), i(-28)]), n("50000000000000000000000000000"));
}

#[test]
fn round_extremes_do_not_panic() {
    assert!(err("ROUND", &[n("79228162514264337593543950335"), i(-29)]).contains("overflow"));
    assert_eq!(ok("TRUNC", &[n("79228162514264337593543950335"), i(-29)]), i(0));
    assert_eq!(ok("ROUND", &[n("-79228162514264337593543950335"), i(i64::MIN)]), i(0));
    assert_eq!(ok("TRUNC", &[n("0.0000000000000000000000000001"), i(i64::MAX)]), n("0.0000000000000000000000000001"));
    assert!(call("ROUND", &[n("79228162514264337593543950335"), i(-1)]).is_err());
}

#[test]
fn power_and_sqrt() {
    assert_eq!(ok("POWER", &[i(2), i(10)]), i(1024));
    assert_eq!(ok("POWER", &[i(2), i(-2)]), n("0.25"));
    assert_eq!(ok("POWER", &[n("1.1"), i(2)]), n("1.21"));
    assert_eq!(ok("POWER", &[i(2), i(70)]), n("1180591620717411303424"));
    assert_eq!(ok("POWER", &[i(-2), i(3)]), i(-8));
    assert_eq!(ok("POWER", &[i(0), i(0)]), i(1));
    assert_eq!(ok("POWER", &[i(4), n("0.5")]), i(2));
    assert_eq!(ok("POWER", &[i(2), n("0.5")]), n("1.41421356237310"));
    assert_eq!(ok("POWER", &[n("0.5"), i(1000)]), i(0));
    assert_eq!(ok("POWER", &[i(1), i(i64::MAX)]), i(1));
    assert_eq!(ok("POWER", &[NULL_V, i(2)]), NULL_V);
    assert!(err("POWER", &[i(10), i(100)]).contains("numeric overflow"));
    assert!(err("POWER", &[i(10), n("100.5")]).contains("numeric overflow"));
    assert!(err("POWER", &[i(-8), n("0.5")]).contains("out of range"));
    assert!(err("POWER", &[i(0), i(-1)]).starts_with("POWER:"));
    assert!(err("POWER", &[n("0.1"), i(-100)]).starts_with("POWER:"));
    assert_eq!(ok("POWER", &[i(10), n("-40.5")]), i(0));
    assert_eq!(ok("SQRT", &[i(16)]), i(4));
    assert_eq!(ok("SQRT", &[n("0.01")]), n("0.1"));
    assert_eq!(ok("SQRT", &[i(2)]), n("1.41421356237310"));
    assert_eq!(ok("SQRT", &[i(0)]), i(0));
    assert_eq!(ok("SQRT", &[NULL_V]), NULL_V);
    assert_eq!(err("SQRT", &[i(-1)]), "SQRT: argument '-1' is out of range");
}

// ---- choices ----

#[test]
fn nvl_and_coalesce() {
    assert_eq!(ok("NVL", &[NULL_V, i(2)]), i(2));
    assert_eq!(ok("NVL", &[i(1), i(2)]), i(1));
    assert_eq!(ok("NVL", &[NULL_V, NULL_V]), NULL_V);
    assert_eq!(ok("NVL2", &[NULL_V, i(1), i(2)]), i(2), "NVL2 of NULL is its third argument");
    assert_eq!(ok("NVL2", &[i(0), i(1), i(2)]), i(1), "NVL2 of a value is its second");
    assert_eq!(ok("NVL2", &[i(0), NULL_V, i(2)]), NULL_V);
    assert_eq!(ok("COALESCE", &[NULL_V, NULL_V, s("c")]), s("c"));
    assert_eq!(ok("COALESCE", &[NULL_V, NULL_V]), NULL_V);
}

#[test]
fn nullif() {
    assert_eq!(ok("NULLIF", &[i(3), i(3)]), NULL_V, "equal values give NULL");
    assert_eq!(ok("NULLIF", &[i(3), i(4)]), i(3), "unequal ones the first");
    assert_eq!(ok("NULLIF", &[i(3), NULL_V]), i(3), "a NULL second argument equals nothing");
    assert_eq!(ok("NULLIF", &[NULL_V, i(3)]), NULL_V);
    assert_eq!(ok("NULLIF", &[s("a"), s("a")]), NULL_V);
    assert_eq!(ok("NULLIF", &[s("a"), s("A")]), s("a"), "text compares by its bytes");
    assert!(err("NULLIF", &[i(1)]).contains("argument"), "NULLIF takes two arguments");
}

#[test]
fn greatest_and_least() {
    assert_eq!(ok("GREATEST", &[i(1), i(3), i(2)]), i(3));
    assert_eq!(ok("LEAST", &[i(1), i(3), n("0.5")]), n("0.5"));
    assert_eq!(ok("GREATEST", &[i(1), s("2.5")]), n("2.5"));
    assert_eq!(ok("GREATEST", &[s("10"), i(9)]), s("9"));
    assert_eq!(ok("LEAST", &[s("b"), s("a"), s("c")]), s("a"));
    assert_eq!(ok("GREATEST", &[date("2024-01-01"), s("2024-02-01")]), date("2024-02-01"));
    assert_eq!(ok("GREATEST", &[i(1), NULL_V, i(3)]), NULL_V);
    assert_eq!(ok("LEAST", &[i(5)]), i(5));
    assert!(err("GREATEST", &[i(1), s("x")]).starts_with("GREATEST:"));
}

#[test]
fn decode_matches_null_and_converts() {
    assert_eq!(ok("DECODE", &[i(2), i(1), s("one"), i(2), s("two"), s("other")]), s("two"));
    assert_eq!(ok("DECODE", &[i(3), i(1), s("one"), i(2), s("two"), s("other")]), s("other"));
    assert_eq!(ok("DECODE", &[i(3), i(1), s("one"), i(2), s("two")]), NULL_V);
    assert_eq!(ok("DECODE", &[NULL_V, i(1), s("one"), NULL_V, s("null")]), s("null"));
    assert_eq!(ok("DECODE", &[i(1), NULL_V, s("null"), i(1), s("one")]), s("one"));
    assert_eq!(ok("DECODE", &[s("1.0"), i(1), s("one")]), s("one"));
    assert_eq!(ok("DECODE", &[i(1), i(1), NULL_V, i(2), i(5)]), NULL_V);
    assert_eq!(ok("DECODE", &[i(2), i(1), NULL_V, i(2), i(5)]), s("5"));
    assert_eq!(ok("DECODE", &[i(2), i(1), i(10), i(2), s("20")]), i(20));
    assert!(err("DECODE", &[s("x"), i(1), s("one")]).contains("invalid number"));
}

// ---- ORA_HASH and DBMS_RANDOM ----

#[test]
fn ora_hash_is_deterministic_and_bounded() {
    let h = ok("ORA_HASH", &[s("abc")]);
    assert_eq!(ok("ORA_HASH", &[s("abc")]), h);
    assert_ne!(ok("ORA_HASH", &[s("abc"), i(4294967295), i(1)]), h);
    let Datum::Int(v) = h else { panic!("{h:?}") };
    assert!((0..=4294967295).contains(&v));
    for x in 0..200 {
        let Datum::Int(b) = ok("ORA_HASH", &[i(x), i(9)]) else { panic!() };
        assert!((0..=9).contains(&b));
    }
    assert_eq!(ok("ORA_HASH", &[i(5), i(0)]), i(0));
    assert_eq!(ok("ORA_HASH", &[NULL_V]), NULL_V);
    assert_eq!(ok("ORA_HASH", &[i(1), NULL_V]), NULL_V);
    assert_eq!(ok("ORA_HASH", &[n("1.50")]), ok("ORA_HASH", &[n("1.5")]));
    assert!(err("ORA_HASH", &[i(1), i(-1)]).contains("out of range"));
    assert!(err("ORA_HASH", &[i(1), i(10), i(4294967296)]).contains("out of range"));
}

#[test]
fn random_value_is_seeded_and_in_range() {
    let f = ScalarFunction::lookup("DBMS_RANDOM.VALUE", 0).unwrap();
    let mut a = FunctionContext::new(0, 7);
    let mut b = FunctionContext::new(0, 7);
    let low = n("-5.5");
    let high = i(10);
    for _ in 0..500 {
        let x = f.call(&[], &mut a).unwrap();
        assert_eq!(x, f.call(&[], &mut b).unwrap());
        assert!(x.sql_cmp(&i(0)).unwrap() != Some(Ordering::Less));
        assert_eq!(x.sql_cmp(&i(1)).unwrap(), Some(Ordering::Less));
        let y = f.call(&[low.clone(), high.clone()], &mut a).unwrap();
        assert_eq!(y, f.call(&[low.clone(), high.clone()], &mut b).unwrap());
        assert!(y.sql_cmp(&low).unwrap() != Some(Ordering::Less));
        assert_eq!(y.sql_cmp(&high).unwrap(), Some(Ordering::Less));
    }
    assert_eq!(f.call(&[NULL_V, i(1)], &mut a).unwrap(), NULL_V);
    assert_eq!(f.call(&[i(3), i(3)], &mut a).unwrap(), i(3));
    let big = n("79228162514264337593543950335");
    assert!(f.call(&[negate(&big).unwrap(), big], &mut a).is_err());
    let mut r = RandomState::new(1);
    for _ in 0..1000 {
        let x = r.next_f64();
        assert!((0.0..1.0).contains(&x));
    }
}

#[test]
fn random_string_options() {
    let f = ScalarFunction::lookup("DBMS_RANDOM.STRING", 2).unwrap();
    let mut c = ctx();
    let check = |c: &mut FunctionContext, opt: Value, ok: fn(char) -> bool| {
        let Datum::Str(v) = f.call(&[opt, i(50)], c).unwrap() else { panic!() };
        assert_eq!(v.chars().count(), 50);
        assert!(v.chars().all(ok), "{v}");
    };
    check(&mut c, s("U"), |ch| ch.is_ascii_uppercase());
    check(&mut c, s("l"), |ch| ch.is_ascii_lowercase());
    check(&mut c, s("a"), |ch| ch.is_ascii_alphabetic());
    check(&mut c, s("X"), |ch| ch.is_ascii_uppercase() || ch.is_ascii_digit());
    check(&mut c, s("p"), |ch| (' '..='~').contains(&ch));
    check(&mut c, NULL_V, |ch| ch.is_ascii_uppercase());
    check(&mut c, s("?"), |ch| ch.is_ascii_uppercase());
    assert_eq!(f.call(&[s("U"), i(0)], &mut c).unwrap(), NULL_V);
    assert_eq!(f.call(&[s("U"), NULL_V], &mut c).unwrap(), NULL_V);
    let Datum::Str(long) = f.call(&[s("U"), i(i64::MAX)], &mut c).unwrap() else { panic!() };
    assert_eq!(long.len(), 4000);
}

// ---- conversions ----

#[test]
fn to_char_numbers() {
    assert_eq!(ok("TO_CHAR", &[n("1.50")]), s("1.5"));
    assert_eq!(ok("TO_CHAR", &[i(42), s("FM0000")]), s("0042"));
    assert_eq!(ok("TO_CHAR", &[i(42), s("999999")]), s("     42"));
    assert_eq!(ok("TO_CHAR", &[i(-42), s("999999")]), s("    -42"));
    assert_eq!(ok("TO_CHAR", &[n("3.14159"), s("99.99")]), s("  3.14"));
    assert_eq!(ok("TO_CHAR", &[n("3.145"), s("99.99")]), s("  3.15"));
    assert_eq!(ok("TO_CHAR", &[n("1.5"), s("99.99")]), s("  1.50"));
    assert_eq!(ok("TO_CHAR", &[n("1.5"), s("FM99.99")]), s("1.5"));
    assert_eq!(ok("TO_CHAR", &[i(1), s("FM99.99")]), s("1."));
    assert_eq!(ok("TO_CHAR", &[n("1.5"), s("FM99.90")]), s("1.50"));
    assert_eq!(ok("TO_CHAR", &[n("0.5"), s("990.99")]), s("   0.50"));
    assert_eq!(ok("TO_CHAR", &[n("0.5"), s("999.99")]), s("    .50"));
    assert_eq!(ok("TO_CHAR", &[i(0), s("999")]), s("   0"));
    assert_eq!(ok("TO_CHAR", &[i(1234567), s("9,999,999")]), s(" 1,234,567"));
    assert_eq!(ok("TO_CHAR", &[i(123), s("9,999")]), s("   123"));
    assert_eq!(ok("TO_CHAR", &[i(1234), s("FM9G999D00")]), s("1,234.00"));
    assert_eq!(ok("TO_CHAR", &[i(123), s("99")]), s("###"));
    assert_eq!(ok("TO_CHAR", &[n("9.99"), s("9.9")]), s("####"));
    assert_eq!(ok("TO_CHAR", &[i(12345), s("FM999")]), s("####"));
    assert_eq!(ok("TO_CHAR", &[i(5), s("$999")]), s("   $5"));
    assert_eq!(ok("TO_CHAR", &[n("1234.56"), s("$9,999.99")]), s(" $1,234.56"));
    assert_eq!(ok("TO_CHAR", &[n("-1234.56"), s("$9,999.99")]), s("-$1,234.56"));
    assert_eq!(ok("TO_CHAR", &[i(-5), s("S999")]), s("  -5"));
    assert_eq!(ok("TO_CHAR", &[i(5), s("S999")]), s("  +5"));
    assert_eq!(ok("TO_CHAR", &[i(-5), s("999MI")]), s("  5-"));
    assert_eq!(ok("TO_CHAR", &[i(5), s("FM999MI")]), s("5"));
    assert_eq!(ok("TO_CHAR", &[n("-0.001"), s("9.99")]), s("  .00"));
    assert_eq!(ok("TO_CHAR", &[n("2.5"), s("TM9")]), s("2.5"));
    assert_eq!(ok("TO_CHAR", &[s("12"), s("FM000")]), s("012"));
    assert_eq!(ok("TO_CHAR", &[i(5), NULL_V]), NULL_V);
    assert_eq!(ok("TO_CHAR", &[NULL_V, s("999")]), NULL_V);
    assert_eq!(ok("TO_CHAR", &[NULL_V]), NULL_V);
    assert!(err("TO_CHAR", &[i(5), s("99X")]).contains("invalid number format model"));
    assert!(err("TO_CHAR", &[i(5), s("9.9.9")]).contains("invalid number format model"));
    assert!(err("TO_CHAR", &[i(5), s("FM")]).contains("invalid number format model"));
    assert!(err("TO_CHAR", &[s("abc"), s("999")]).contains("invalid number"));
}

#[test]
fn to_char_dates() {
    let d = date("2024-03-05 14:07:09");
    assert_eq!(ok("TO_CHAR", std::slice::from_ref(&d)), s("2024-03-05 14:07:09"));
    assert_eq!(ok("TO_CHAR", &[d.clone(), s("YYYY-MM-DD HH24:MI:SS")]), s("2024-03-05 14:07:09"));
    assert_eq!(ok("TO_CHAR", &[d.clone(), s("yyyy/mm/dd hh:mi am")]), s("2024/03/05 02:07 pm"));
    assert_eq!(ok("TO_CHAR", &[d.clone(), s("DD-MON-YY")]), s("05-MAR-24"));
    assert_eq!(ok("TO_CHAR", &[d.clone(), s("Mon DD, YYYY")]), s("Mar 05, 2024"));
    assert_eq!(ok("TO_CHAR", &[d.clone(), s("Month")]), s("March    "));
    assert_eq!(ok("TO_CHAR", &[d.clone(), s("FMMonth DD")]), s("March 5"));
    assert_eq!(ok("TO_CHAR", &[d.clone(), s("DAY")]), s("TUESDAY  "));
    assert_eq!(ok("TO_CHAR", &[d.clone(), s("Dy D DDD Q")]), s("Tue 3 065 1"));
    assert_eq!(ok("TO_CHAR", &[d.clone(), s("\"Date: \"YYYY\"!\"")]), s("Date: 2024!"));
    assert_eq!(ok("TO_CHAR", &[d.clone(), s("HH12 A.M. SSSSS")]), s("02 P.M. 50829"));
    assert_eq!(ok("TO_CHAR", &[date("1970-01-01"), s("J")]), s("2440588"));
    assert_eq!(ok("TO_CHAR", &[d.clone(), NULL_V]), NULL_V);
    assert!(err("TO_CHAR", &[d.clone(), s("YYYY-XX")]).contains("date format not recognized"));
    assert!(err("TO_CHAR", &[d, s("\"open")]).starts_with("TO_CHAR:"));
}

#[test]
fn to_date_with_masks() {
    assert_eq!(ok("TO_DATE", &[s("2024-03-05")]), date("2024-03-05"));
    assert_eq!(ok("TO_DATE", &[s("2024-03-05"), s("YYYY-MM-DD")]), date("2024-03-05"));
    assert_eq!(ok("TO_DATE", &[s("20240305"), s("YYYYMMDD")]), date("2024-03-05"));
    assert_eq!(ok("TO_DATE", &[i(20240305), s("YYYYMMDD")]), date("2024-03-05"));
    assert_eq!(ok("TO_DATE", &[s("05-mar-2024"), s("DD-MON-YYYY")]), date("2024-03-05"));
    assert_eq!(ok("TO_DATE", &[s("5 March 2024"), s("DD MONTH YYYY")]), date("2024-03-05"));
    assert_eq!(ok("TO_DATE", &[s("2024/3/5"), s("YYYY-MM-DD")]), date("2024-03-05"));
    assert_eq!(ok("TO_DATE", &[s("2024-03-05 02:07:09 PM"), s("YYYY-MM-DD HH:MI:SS AM")]), date("2024-03-05 14:07:09"));
    assert_eq!(ok("TO_DATE", &[s("2024-03-05 12:00 a.m."), s("YYYY-MM-DD HH12:MI P.M.")]), date("2024-03-05"));
    assert_eq!(ok("TO_DATE", &[s("2024-03-05 23:59:59"), s("yyyy-mm-dd hh24:mi:ss")]), date("2024-03-05 23:59:59"));
    assert_eq!(ok("TO_DATE", &[s("2024-03-05"), s("YYYY-MM-DD HH24:MI:SS")]), date("2024-03-05"));
    assert_eq!(ok("TO_DATE", &[s("Tue 2024-03-05"), s("DY YYYY-MM-DD")]), date("2024-03-05"));
    assert_eq!(ok("TO_DATE", &[s("2024"), s("YYYY")]), date("2024-03-01"));
    assert_eq!(ok("TO_DATE", &[s("24-03-05"), s("YY-MM-DD")]), date("2024-03-05"));
    assert_eq!(ok("TO_DATE", &[s("99-03-05"), s("RR-MM-DD")]), date("1999-03-05"));
    assert_eq!(ok("TO_DATE", &[s("49-03-05"), s("RR-MM-DD")]), date("2049-03-05"));
    assert_eq!(ok("TO_DATE", &[s("2024-065"), s("YYYY-DDD")]), date("2024-03-05"));
    assert_eq!(ok("TO_DATE", &[s("2440588"), s("J")]), date("1970-01-01"));
    assert_eq!(ok("TO_DATE", &[s("T2024"), s("\"T\"YYYY")]), date("2024-03-01"));
    assert_eq!(ok("TO_DATE", &[NULL_V, s("YYYY")]), NULL_V);
    assert_eq!(ok("TO_DATE", &[s("2024"), NULL_V]), NULL_V);
    assert_eq!(ok("TO_DATE", &[date("2024-01-01"), s("YYYY")]), date("2024-01-01"));
    assert_eq!(err("TO_DATE", &[s("x"), s("YYYY-MM-DD")]), "TO_DATE: 'x' does not match format 'YYYY-MM-DD'");
    assert!(err("TO_DATE", &[s("2024-03-05 10"), s("YYYY-MM-DD")]).contains("does not match"));
    assert!(err("TO_DATE", &[s("2024-13-05"), s("YYYY-MM-DD")]).contains("not a valid month"));
    assert!(err("TO_DATE", &[s("2023-02-29"), s("YYYY-MM-DD")]).contains("day of month"));
    assert!(err("TO_DATE", &[s("2024-02-01 24:00"), s("YYYY-MM-DD HH24:MI")]).contains("hour"));
    assert!(err("TO_DATE", &[s("2024-02-01 13"), s("YYYY-MM-DD HH")]).contains("hour"));
    assert!(err("TO_DATE", &[s("2024-02-01 10:60"), s("YYYY-MM-DD HH24:MI")]).contains("minutes"));
    assert!(err("TO_DATE", &[s("0000-01-01"), s("YYYY-MM-DD")]).contains("year"));
    assert!(err("TO_DATE", &[s("1"), s("Q")]).starts_with("TO_DATE:"));
    assert!(err("TO_DATE", &[s("yesterday")]).starts_with("TO_DATE:"));
}

#[test]
fn to_number_parses() {
    assert_eq!(ok("TO_NUMBER", &[s(" 42 ")]), i(42));
    assert_eq!(ok("TO_NUMBER", &[s("-1.50")]), n("-1.5"));
    assert_eq!(ok("TO_NUMBER", &[i(3)]), i(3));
    assert_eq!(ok("TO_NUMBER", &[NULL_V]), NULL_V);
    assert_eq!(ok("TO_NUMBER", &[s("1,234.5"), s("9,999.99")]), n("1234.5"));
    assert_eq!(ok("TO_NUMBER", &[s("$12"), s("$99")]), i(12));
    assert_eq!(ok("TO_NUMBER", &[s("12-"), s("99MI")]), i(-12));
    assert_eq!(ok("TO_NUMBER", &[s("12"), NULL_V]), NULL_V);
    assert_eq!(err("TO_NUMBER", &[s("abc")]), "TO_NUMBER: invalid number 'abc'");
    assert!(err("TO_NUMBER", &[s("1234"), s("99")]).contains("invalid number"));
    assert!(err("TO_NUMBER", &[s("1.234"), s("9.99")]).contains("invalid number"));
    assert!(err("TO_NUMBER", &[date("2024-01-01")]).starts_with("TO_NUMBER:"));
}

// ---- dates ----

#[test]
fn round_and_trunc_dates() {
    let d = date("2024-08-16 13:45:50");
    let t = |f: &str| ok("TRUNC", &[d.clone(), s(f)]);
    let r = |f: &str| ok("ROUND", &[d.clone(), s(f)]);
    assert_eq!(ok("TRUNC", std::slice::from_ref(&d)), date("2024-08-16"));
    assert_eq!(ok("ROUND", std::slice::from_ref(&d)), date("2024-08-17"));
    assert_eq!(ok("ROUND", &[date("2024-08-16 11:59:59")]), date("2024-08-16"));
    assert_eq!(t("MM"), date("2024-08-01"));
    assert_eq!(r("MM"), date("2024-09-01"));
    assert_eq!(ok("ROUND", &[date("2024-08-15 23:00:00"), s("MM")]), date("2024-08-01"));
    assert_eq!(t("yyyy"), date("2024-01-01"));
    assert_eq!(r("YYYY"), date("2025-01-01"));
    assert_eq!(ok("ROUND", &[date("2024-06-30"), s("YEAR")]), date("2024-01-01"));
    assert_eq!(t("DD"), date("2024-08-16"));
    assert_eq!(r("DD"), date("2024-08-17"));
    assert_eq!(t("Q"), date("2024-07-01"));
    assert_eq!(r("Q"), date("2024-10-01"));
    assert_eq!(ok("ROUND", &[date("2024-08-15"), s("Q")]), date("2024-07-01"));
    assert_eq!(t("HH24"), date("2024-08-16 13:00:00"));
    assert_eq!(r("HH"), date("2024-08-16 14:00:00"));
    assert_eq!(t("MI"), date("2024-08-16 13:45:00"));
    assert_eq!(r("MI"), date("2024-08-16 13:46:00"));
    assert_eq!(t("IW"), date("2024-08-12"));
    assert_eq!(r("IW"), date("2024-08-19"));
    assert_eq!(t("DAY"), date("2024-08-11"));
    assert_eq!(ok("TRUNC", &[d.clone(), NULL_V]), NULL_V);
    assert!(err("TRUNC", &[d.clone(), s("XX")]).contains("bad precision specifier"));
    assert!(err("ROUND", &[date("9999-12-31"), s("YYYY")]).contains("date out of range"));
    assert_eq!(ok("TRUNC", &[date("0001-01-01 05:00:00")]), date("0001-01-01"));
}

#[test]
fn add_months_and_last_day() {
    assert_eq!(ok("ADD_MONTHS", &[date("2024-01-31"), i(1)]), date("2024-02-29"));
    assert_eq!(ok("ADD_MONTHS", &[date("2024-02-29"), i(1)]), date("2024-03-31"));
    assert_eq!(ok("ADD_MONTHS", &[date("2024-01-15 10:00:00"), i(-13)]), date("2022-12-15 10:00:00"));
    assert_eq!(ok("ADD_MONTHS", &[date("2024-01-15"), n("1.9")]), date("2024-02-15"));
    assert_eq!(ok("ADD_MONTHS", &[s("2024-01-15"), i(12)]), date("2025-01-15"));
    assert_eq!(ok("ADD_MONTHS", &[NULL_V, i(1)]), NULL_V);
    assert_eq!(ok("ADD_MONTHS", &[date("2024-01-15"), NULL_V]), NULL_V);
    assert!(err("ADD_MONTHS", &[date("9999-12-01"), i(1)]).contains("date out of range"));
    assert!(err("ADD_MONTHS", &[date("2024-01-01"), i(i64::MAX)]).contains("date out of range"));
    assert!(err("ADD_MONTHS", &[i(5), i(1)]).starts_with("ADD_MONTHS:"));
    assert_eq!(ok("LAST_DAY", &[date("2023-02-10 08:00:00")]), date("2023-02-28 08:00:00"));
    assert_eq!(ok("LAST_DAY", &[date("2000-02-01")]), date("2000-02-29"));
    assert_eq!(ok("LAST_DAY", &[date("1900-02-01")]), date("1900-02-28"));
    assert_eq!(ok("LAST_DAY", &[date("2024-12-05")]), date("2024-12-31"));
    assert_eq!(ok("LAST_DAY", &[NULL_V]), NULL_V);
}

/// A function the binder makes (EXTRACT), called on `args`.
fn syntax(f: ScalarFunction, args: &[Value]) -> Result<Value> {
    f.call(args, &mut ctx())
}

#[test]
fn months_between_counts_whole_months_or_days_in_months_of_31() {
    // Oracle's documented example: 1 month and a day.
    let between = |a: &str, b: &str| ok("MONTHS_BETWEEN", &[date(a), date(b)]);
    assert_eq!(between("1995-02-02", "1995-01-01"), n("1.0322580645161290322580645161"));
    assert_eq!(between("1995-01-01", "1995-02-02"), n("-1.0322580645161290322580645161"));
    // The same day of the month, or both last days: whole, times ignored.
    assert_eq!(between("2024-03-15 23:00:00", "2023-01-15 01:00:00"), i(14));
    assert_eq!(between("2024-02-29", "2024-01-31"), i(1));
    assert_eq!(between("2023-02-28", "2023-03-31"), i(-1));
    // Otherwise the time counts too: 12 hours are half of one 31st of a month.
    assert_eq!(between("2024-01-02 12:00:00", "2024-01-01"), n("0.0483870967741935483870967742"));
    assert_eq!(ok("MONTHS_BETWEEN", &[s("2024-01-01"), date("2024-01-01")]), i(0));
    assert_eq!(ok("MONTHS_BETWEEN", &[NULL_V, date("2024-01-01")]), NULL_V);
    assert!(err("MONTHS_BETWEEN", &[i(1), date("2024-01-01")]).starts_with("MONTHS_BETWEEN:"));
}

#[test]
fn next_day_is_the_first_named_day_after_the_date() {
    // Oracle's documented example: the Tuesday after Thursday 2009-10-15.
    assert_eq!(ok("NEXT_DAY", &[date("2009-10-15"), s("TUESDAY")]), date("2009-10-20"));
    // Never the date itself: a Thursday's next Thursday is a week on; the time is kept.
    assert_eq!(ok("NEXT_DAY", &[date("2009-10-15 08:30:00"), s("thu")]), date("2009-10-22 08:30:00"));
    assert_eq!(ok("NEXT_DAY", &[date("2009-10-15"), s(" Fri ")]), date("2009-10-16"));
    assert_eq!(ok("NEXT_DAY", &[date("2009-10-15"), NULL_V]), NULL_V);
    assert!(err("NEXT_DAY", &[date("2009-10-15"), s("TU")]).contains("not a valid day of the week"));
    // Past the abbreviation, the rest is ignored.
    assert_eq!(ok("NEXT_DAY", &[date("2009-10-15"), s("Tues")]), date("2009-10-20"));
    assert_eq!(ok("NEXT_DAY", &[date("2009-10-15"), s("MONDAYS")]), date("2009-10-19"));
    assert!(err("NEXT_DAY", &[date("9999-12-31"), s("MON")]).contains("date out of range"));
}

#[test]
fn extract_reads_year_month_and_day_of_a_date() {
    let extract = |field: &str, d: Value| syntax(ScalarFunction::Extract, &[s(field), d]).unwrap();
    assert_eq!(extract("YEAR", date("1995-03-15 10:00:00")), i(1995));
    assert_eq!(extract("MONTH", date("1995-03-15")), i(3));
    assert_eq!(extract("DAY", date("1995-03-15")), i(15));
    assert_eq!(extract("DAY", s("1995-03-15")), i(15));
    assert_eq!(extract("YEAR", NULL_V), NULL_V);
    let e = syntax(ScalarFunction::Extract, &[s("HOUR"), date("1995-03-15")]).unwrap_err().to_string();
    assert!(e.contains("ORA-30076: invalid extract field HOUR for a DATE"), "{e}");
}

#[test]
fn extract_reads_the_time_of_a_timestamp_and_the_fields_of_an_interval() {
    let extract = |field: &str, d: Value| syntax(ScalarFunction::Extract, &[s(field), d]).unwrap();
    let t = ts("2024-03-05 10:11:12.123456");
    assert_eq!(extract("YEAR", t.clone()), i(2024));
    assert_eq!(extract("DAY", t.clone()), i(5));
    assert_eq!(extract("HOUR", t.clone()), i(10));
    assert_eq!(extract("MINUTE", t.clone()), i(11));
    assert_eq!(extract("SECOND", t.clone()), n("12.123456"));
    let ds = Datum::DaySecond(-((4 * 86_400 + 5 * 3600 + 12 * 60 + 10) * 1_000_000 + 500_000));
    assert_eq!(extract("DAY", ds.clone()), i(-4));
    assert_eq!(extract("HOUR", ds.clone()), i(-5));
    assert_eq!(extract("MINUTE", ds.clone()), i(-12));
    assert_eq!(extract("SECOND", ds.clone()), n("-10.5"));
    assert_eq!(extract("YEAR", Datum::YearMonth(-35)), i(-2));
    assert_eq!(extract("MONTH", Datum::YearMonth(-35)), i(-11));
    assert!(syntax(ScalarFunction::Extract, &[s("HOUR"), Datum::YearMonth(1)]).is_err());
    assert!(syntax(ScalarFunction::Extract, &[s("YEAR"), ds]).is_err());
}

#[test]
fn timestamps_convert_with_masks_and_intervals_from_numbers_and_text() {
    let t = ts("2024-03-05 10:11:12.123456");
    assert_eq!(ok("TO_CHAR", &[t.clone(), s("HH24:MI:SS.FF3")]), s("10:11:12.123"));
    assert_eq!(ok("TO_CHAR", &[t.clone(), s("FF9")]), s("123456000"));
    assert_eq!(ok("TO_CHAR", std::slice::from_ref(&t)), s("2024-03-05 10:11:12.123456"));
    assert!(err("TO_CHAR", &[date("2024-03-05"), s("SS.FF")]).contains("ORA-01821"));
    assert_eq!(
        ok("TO_TIMESTAMP", &[s("05/03/2024 10:11:12.5"), s("DD/MM/YYYY HH24:MI:SS.FF")]),
        ts("2024-03-05 10:11:12.5")
    );
    assert_eq!(ok("TO_TIMESTAMP", &[s("2024-03-05 10:11:12.123456789")]), ts("2024-03-05 10:11:12.123457"));
    assert_eq!(ok("TO_TIMESTAMP", &[date("2024-03-05")]), ts("2024-03-05"));
    assert!(err("TO_DATE", &[s("10.5"), s("SS.FF")]).contains("ORA-01821"));
    assert_eq!(ok("TO_DATE", std::slice::from_ref(&t)), date("2024-03-05 10:11:12"));
    assert_eq!(ok("NUMTODSINTERVAL", &[n("1.5"), s("day")]), Datum::DaySecond(129_600_000_000));
    assert_eq!(ok("NUMTODSINTERVAL", &[i(90), s("SECOND")]), Datum::DaySecond(90_000_000));
    assert_eq!(ok("NUMTOYMINTERVAL", &[i(14), s("MONTH")]), Datum::YearMonth(14));
    assert!(err("NUMTOYMINTERVAL", &[i(1), s("DAY")]).contains("ORA-01760"));
    assert_eq!(ok("TO_DSINTERVAL", &[s("-1 02:00:00")]), Datum::DaySecond(-93_600_000_000));
    assert_eq!(ok("TO_YMINTERVAL", &[s("+2-03")]), Datum::YearMonth(27));
    assert!(err("TO_YMINTERVAL", &[s("2 years")]).starts_with("TO_YMINTERVAL:"));
    // A TIMESTAMP is the DATE it holds to the date functions, which give DATEs.
    assert_eq!(ok("TRUNC", std::slice::from_ref(&t)), date("2024-03-05"));
    assert_eq!(ok("ADD_MONTHS", &[t.clone(), i(1)]), date("2024-04-05 10:11:12"));
    assert_eq!(ok("GREATEST", &[t, s("2025-01-01 00:00:00.5")]), ts("2025-01-01 00:00:00.5"));
}

#[test]
fn intervals_add_months_strictly_and_seconds_exactly() {
    let months = |d: &str, m: i64| arithmetic(ArithOp::Add, &date(d), &Datum::YearMonth(m));
    let seconds = |d: &str, secs: i64| arithmetic(ArithOp::Add, &date(d), &Datum::DaySecond(secs * 1_000_000));
    assert_eq!(months("1993-07-01 06:00:00", 3).unwrap(), date("1993-10-01 06:00:00"));
    assert_eq!(months("1994-01-01", 12).unwrap(), date("1995-01-01"));
    assert_eq!(months("1994-01-01", -13).unwrap(), date("1992-12-01"));
    // A month's last day stays its day of the month (ADD_MONTHS would move to the last).
    assert_eq!(months("2024-02-29", 1).unwrap(), date("2024-03-29"));
    // A day the month lacks is an error, not the month's last day.
    let e = months("2024-01-31", 1).unwrap_err().to_string();
    assert!(e.contains("date not valid for month specified"), "{e}");
    assert!(months("9999-12-01", 1).unwrap_err().to_string().contains("date out of range"));
    assert_eq!(seconds("1998-12-01", -90 * 86_400).unwrap(), date("1998-09-02"));
    assert_eq!(seconds("2024-01-01", 4 * 86_400 + 18_730).unwrap(), date("2024-01-05 05:12:10"));
    assert!(seconds("0001-01-01", -1).unwrap_err().to_string().contains("date out of range"));
    assert_eq!(arithmetic(ArithOp::Sub, &NULL_V, &Datum::DaySecond(1)).unwrap(), NULL_V);
    // A DATE drops the fraction of a second an interval leaves, toward the earlier second.
    assert_eq!(
        arithmetic(ArithOp::Sub, &date("2024-01-01"), &Datum::DaySecond(500_000)).unwrap(),
        date("2023-12-31 23:59:59")
    );
}

#[test]
fn timestamps_and_intervals_follow_oracles_arithmetic() {
    let add = |a: &Value, b: &Value| arithmetic(ArithOp::Add, a, b).unwrap();
    let sub = |a: &Value, b: &Value| arithmetic(ArithOp::Sub, a, b).unwrap();
    let t = ts("2024-01-31 23:59:59.5");
    assert_eq!(add(&t, &Datum::YearMonth(12)), ts("2025-01-31 23:59:59.5"));
    assert!(arithmetic(ArithOp::Add, &t, &Datum::YearMonth(1)).unwrap_err().to_string().contains("ORA-01839"));
    assert_eq!(add(&Datum::DaySecond(500_000), &t), ts("2024-02-01"));
    // A TIMESTAMP and a number: a DATE, the fraction dropped.
    assert_eq!(add(&t, &i(1)), date("2024-02-01 23:59:59"));
    assert_eq!(sub(&t, &date("2024-01-31")), Datum::DaySecond(86_399_500_000));
    assert_eq!(sub(&date("2024-01-31"), &t), Datum::DaySecond(-86_399_500_000));
    assert_eq!(sub(&date("2024-02-01"), &date("2024-01-31")), i(1));
    assert_eq!(add(&Datum::YearMonth(5), &Datum::YearMonth(-7)), Datum::YearMonth(-2));
    assert_eq!(arithmetic(ArithOp::Mul, &Datum::YearMonth(5), &n("1.5")).unwrap(), Datum::YearMonth(7));
    assert_eq!(arithmetic(ArithOp::Mul, &i(3), &Datum::DaySecond(1)).unwrap(), Datum::DaySecond(3));
    assert_eq!(arithmetic(ArithOp::Div, &Datum::DaySecond(10), &i(4)).unwrap(), Datum::DaySecond(3));
    assert_eq!(negate(&Datum::YearMonth(5)).unwrap(), Datum::YearMonth(-5));
    for (op, a, b) in [
        (ArithOp::Add, Datum::YearMonth(1), Datum::DaySecond(1)),
        (ArithOp::Add, t.clone(), t.clone()),
        (ArithOp::Mul, t.clone(), i(2)),
        (ArithOp::Sub, Datum::DaySecond(1), t.clone()),
        (ArithOp::Div, i(1), Datum::DaySecond(1)),
    ] {
        let e = arithmetic(op, &a, &b).unwrap_err().to_string();
        assert!(e.contains("ORA-30081"), "{a:?} {op:?} {b:?}: {e}");
    }
    assert!(arithmetic(ArithOp::Div, &Datum::YearMonth(1), &i(0)).unwrap_err().to_string().contains("divisor"));
    assert!(arithmetic(ArithOp::Add, &ts("9999-12-31 23:59:59"), &Datum::DaySecond(1_000_000)).is_err());
    assert!(arithmetic(ArithOp::Mul, &Datum::DaySecond(i64::MAX), &i(2)).is_err());
}

#[test]
fn dates_far_out_of_range_do_not_panic() {
    for secs in [i64::MIN, i64::MAX, MIN_DATE - 1, MAX_DATE + 1] {
        let d = Datum::Date(secs);
        for f in ["TRUNC", "ROUND", "LAST_DAY", "TO_CHAR"] {
            let _ = call(f, std::slice::from_ref(&d));
        }
        let _ = call("ADD_MONTHS", &[d.clone(), i(1)]);
        let _ = call("MONTHS_BETWEEN", &[d.clone(), d.clone()]);
        let _ = call("NEXT_DAY", &[d.clone(), s("MON")]);
        let _ = syntax(ScalarFunction::Extract, &[s("YEAR"), d.clone()]);
        let _ = arithmetic(ArithOp::Add, &d, &Datum::YearMonth(i64::MIN));
        let _ = arithmetic(ArithOp::Sub, &d, &Datum::DaySecond(i64::MIN));
        let t = Datum::Timestamp(secs);
        let _ = arithmetic(ArithOp::Add, &t, &Datum::YearMonth(i64::MAX));
        let _ = arithmetic(ArithOp::Sub, &t, &d);
        let _ = syntax(ScalarFunction::Extract, &[s("SECOND"), t.clone()]);
        let _ = call("TO_CHAR", &[t.clone(), s("YYYY FF")]);
        let _ = call("TO_CHAR", &[d.clone(), s("YYYY J")]);
        let _ = arithmetic(ArithOp::Sub, &d, &Datum::Date(0));
        let _ = arithmetic(ArithOp::Add, &d, &i(1));
    }
}

#[test]
fn f64_conversion_edges() {
    assert_eq!(f64_to_decimal(1e-40, "X").unwrap(), Decimal::ZERO);
    assert_eq!(f64_to_decimal(1.5e-27, "X").unwrap(), Decimal::from_str("0.0000000000000000000000000015").unwrap());
    assert!(f64_to_decimal(1e29, "X").is_err());
    assert!(f64_to_decimal(f64::NAN, "X").is_err());
    assert_eq!(f64_to_decimal(-2.5, "X").unwrap(), Decimal::from_str("-2.5").unwrap());
}

// ---- properties ----

const DATE_MASK_PIECES: &[&str] = &[
    "YYYY", "YYY", "YY", "Y", "RRRR", "RR", "MM", "MON", "Month", "DD", "DDD", "Dy", "day", "D", "HH24", "HH", "HH12",
    "MI", "SS", "SSSSS", "AM", "p.m.", "Q", "J", "FM", "FX", "-", " ", ":", "\"at\"", "/",
];

fn any_datum() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Datum::Null),
        any::<i64>().prop_map(Datum::Int),
        (any::<i64>(), 0u32..=28).prop_map(|(m, s)| Datum::from_decimal(Decimal::new(m, s))),
        ".{0,12}".prop_map(Datum::string),
        (MIN_DATE - 10..MAX_DATE + 10).prop_map(Datum::Date),
    ]
}

/// ORA_HASH of a whole number the byte-by-byte way, as [`ora_hash`] computes it.
fn ora_hash_bytewise(value: i64, max_bucket: i64, seed: i64) -> i64 {
    let mut h = Fnv::seeded(seed);
    h.write_whole_number(value);
    h.bucket(max_bucket)
}

#[test]
fn prepared_whole_number_hash_is_the_bytewise_hash() {
    for v in [0, 1, 255, 256, 65_535, 65_536, i64::MAX, -1, -256, i64::MIN, 5_000_000] {
        let prepared = WholeNumberHash::new(99_999, 1).unwrap();
        assert_eq!(prepared.hash(v), ora_hash_bytewise(v, 99_999, 1), "{v}");
    }
    assert!(WholeNumberHash::new(-1, 0).is_none());
    assert!(WholeNumberHash::new(1, ORA_HASH_LIMIT + 1).is_none());
}

proptest! {
    #[test]
    fn prepared_whole_number_hash_agrees(
        value in prop_oneof![any::<i64>(), 0i64..70_000, -300i64..300],
        max_bucket in prop_oneof![0..=ORA_HASH_LIMIT, Just(ORA_HASH_LIMIT), 0i64..1000],
        seed in prop_oneof![0..=ORA_HASH_LIMIT, 0i64..4],
    ) {
        let prepared = WholeNumberHash::new(max_bucket, seed).expect("in range");
        prop_assert_eq!(prepared.hash(value), ora_hash_bytewise(value, max_bucket, seed));
        prop_assert_eq!(ok("ORA_HASH", &[i(value), i(max_bucket), i(seed)]), i(prepared.hash(value)));
    }

    #[test]
    fn pads_have_the_requested_length(text in ".{0,30}", fill in ".{1,5}", len in 1i64..200, left in any::<bool>()) {
        let name = if left { "LPAD" } else { "RPAD" };
        let out = call(name, &[s(&text), i(len), Datum::Str(fill.into())]).unwrap();
        let expected = if text.is_empty() { Datum::Null } else { out.clone() };
        prop_assert_eq!(&out, &expected);
        if let Datum::Str(v) = out {
            prop_assert_eq!(v.chars().count() as i64, len);
        }
    }

    #[test]
    fn substr_never_panics(text in ".{0,20}", pos in any::<i64>(), len in proptest::option::of(any::<i64>())) {
        let mut args = vec![s(&text), i(pos)];
        if let Some(l) = len { args.push(i(l)); }
        let out = call("SUBSTR", &args).unwrap();
        if let Datum::Str(v) = out {
            prop_assert!(text.contains(v.as_ref()));
        }
    }

    #[test]
    fn add_then_sub_round_trips(a in any::<i64>(), b in any::<i64>()) {
        let sum = arith(ArithOp::Add, i(a), i(b));
        prop_assert_eq!(arith(ArithOp::Sub, sum.clone(), i(b)), i(a));
        let diff = arith(ArithOp::Sub, i(a), i(b));
        prop_assert_eq!(arith(ArithOp::Add, diff, i(b)), i(a));
    }

    #[test]
    fn to_char_to_date_round_trip(secs in MIN_DATE..=MAX_DATE) {
        let mask = s("YYYY-MM-DD HH24:MI:SS");
        let text = call("TO_CHAR", &[Datum::Date(secs), mask.clone()]).unwrap();
        prop_assert_eq!(&text, &Datum::string(format_date(secs)));
        prop_assert_eq!(call("TO_DATE", &[text, mask]).unwrap(), Datum::Date(secs));
    }

    #[test]
    fn no_function_panics(args in proptest::collection::vec(any_datum(), 0..5), masks in proptest::collection::vec("[A-Za-z0-9.,$ \"-]{0,8}", 1..3)) {
        let mut c = ctx();
        for &f in ALL_FUNCTIONS {
            if f.arity().accepts(args.len()) {
                let _ = f.call(&args, &mut c);
            }
            for m in &masks {
                let mut with_mask = args.iter().take(1).cloned().collect::<Vec<_>>();
                with_mask.push(s(m));
                if f.arity().accepts(2) {
                    let _ = f.call(&with_mask, &mut c);
                }
            }
        }
        for (a, b) in args.iter().zip(args.iter().skip(1)) {
            for op in [ArithOp::Add, ArithOp::Sub, ArithOp::Mul, ArithOp::Div] {
                let _ = arithmetic(op, a, b);
            }
            let _ = concat(a, b);
            let _ = negate(a);
        }
    }

    #[test]
    fn date_masks_never_panic(
        secs in any::<i64>(),
        mask in proptest::collection::vec(proptest::sample::select(DATE_MASK_PIECES), 0..8),
        input in "[0-9A-Za-z .:/-]{0,20}",
        now in any::<i64>(),
    ) {
        let mask: String = mask.concat();
        let _ = format_date_mask(secs, &mask, "TO_CHAR");
        let _ = parse_date_with_mask(&input, &mask, now);
        if let Ok(text) = format_date_mask(secs, &mask, "TO_CHAR") {
            let _ = parse_date_with_mask(&text, &mask, now);
        }
    }

    #[test]
    fn number_masks_never_panic(m in any::<i64>(), scale in 0u32..=28, mask in "(FM)?[S$]?[90,]{0,8}([.D][90]{0,5})?(MI|S)?") {
        let d = Decimal::new(m, scale);
        if let Ok(parsed) = NumberMask::parse(&mask, "TO_CHAR") {
            let out = parsed.format(d);
            if !out.starts_with('#') && !parsed.fill_mode {
                prop_assert_eq!(out.chars().count(), parsed.width());
            }
        }
    }
}

#[test]
fn a_statement_reads_the_clock_at_its_first_use_of_the_time_and_keeps_it() {
    let f = FunctionContext::at_first_use(0);
    std::thread::sleep(std::time::Duration::from_millis(20));
    let before = crate::types::local_now_micros();
    let first = f.now();
    let after = crate::types::local_now_micros();
    assert!(before <= first && first <= after, "{before} <= {first} <= {after}");
    std::thread::sleep(std::time::Duration::from_millis(20));
    assert_eq!(f.now(), first, "the same time for the rest of the statement");
    assert_eq!(f.sysdate_constant(), first.div_euclid(1_000_000));
    assert_eq!(FunctionContext::new(1_234_567, 0).now(), 1_234_567);
}
