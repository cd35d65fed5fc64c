//! Frontend messages of PostgreSQL's protocol (3.0) built byte by byte, for the tests
//! that speak it without a driver: a startup message and typed messages.

/// A startup message (protocol 3.0) for `user`, database `lab`.
pub fn startup(user: &str) -> Vec<u8> {
    let mut body = 196_608i32.to_be_bytes().to_vec();
    body.extend(strings(&["user", user, "database", "lab", ""]));
    let mut message = ((body.len() + 4) as i32).to_be_bytes().to_vec();
    message.extend(body);
    message
}

/// A typed message: its tag, its length, its body.
pub fn message(tag: u8, body: &[u8]) -> Vec<u8> {
    let mut out = vec![tag];
    out.extend_from_slice(&((body.len() + 4) as i32).to_be_bytes());
    out.extend_from_slice(body);
    out
}

/// Zero-terminated strings, one after another.
pub fn strings(parts: &[&str]) -> Vec<u8> {
    parts.iter().flat_map(|p| p.bytes().chain([0])).collect()
}
