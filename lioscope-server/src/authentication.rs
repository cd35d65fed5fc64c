//! Who a client is: SCRAM-SHA-256 against the password verifiers lioscope stores for its
//! users (RFC 5802 and 7677, as PostgreSQL does it), or trust, where a loopback client is
//! whichever user it names.
//!
//! - A client's user name finds a lioscope user as an unquoted name would (`scott` is
//!   SCOTT); the session then runs as that user, with its privileges, if it holds
//!   CREATE SESSION and is not locked.
//! - A name that is no user, or a user without a password, goes through the same
//!   exchange as a real one, against a decoy verifier whose salt is fixed per name for
//!   the server's life: the answers do not tell which names exist.
//! - Over TLS with a certificate, SCRAM-SHA-256-PLUS binds the exchange to the server's
//!   certificate (`tls-server-end-point`), so a man in the middle cannot relay it.

use lioscope::Database;
use pgwire::api::auth::sasl::scram::{ScramSecret, ScramServerAuth, ScramServerAuthWaitingForClientFinal};
use pgwire::api::auth::sasl::{SCRAM_SHA_256_METHOD, SCRAM_SHA_256_PLUS_METHOD};
use pgwire::error::{PgWireError, PgWireResult};

/// How clients are let in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Auth {
    /// A client is the user it names, without a password: allowed only on a loopback
    /// address.
    Trust,
    /// SCRAM-SHA-256 (and -PLUS over TLS) against the users' stored verifiers.
    ScramSha256,
}

/// The SCRAM exchanges of one server: without channel binding, and with it over TLS.
pub struct Authenticator {
    plain: ScramServerAuth,
    bound: Option<ScramServerAuth>,
    /// Salts decoy verifiers: random per server start.
    decoy_key: [u8; 32],
}

impl Authenticator {
    /// The exchanges; `certificate_pem` (the server's TLS certificate chain) enables
    /// SCRAM-SHA-256-PLUS on TLS connections.
    pub fn new(certificate_pem: Option<&[u8]>) -> PgWireResult<Authenticator> {
        let bound = match certificate_pem {
            Some(pem) => {
                let mut scram = ScramServerAuth::new();
                scram.configure_certificate(pem)?;
                Some(scram)
            }
            None => None,
        };
        Ok(Authenticator { plain: ScramServerAuth::new(), bound, decoy_key: rand::random() })
    }

    /// The mechanisms offered to a client, over TLS (`secure`) or not.
    pub fn mechanisms(&self, secure: bool) -> Vec<String> {
        match (&self.bound, secure) {
            (Some(_), true) => vec![SCRAM_SHA_256_PLUS_METHOD.to_owned(), SCRAM_SHA_256_METHOD.to_owned()],
            _ => vec![SCRAM_SHA_256_METHOD.to_owned()],
        }
    }

    /// Answers a client's first message (`mechanism` and its data) with the server's
    /// first, for a client claiming to be `given`, who is lioscope's `user` if any.
    pub fn first(
        &self,
        db: &Database,
        user: Option<&str>,
        given: &str,
        secure: bool,
        mechanism: &str,
        data: &[u8],
    ) -> PgWireResult<(String, Box<ScramServerAuthWaitingForClientFinal>)> {
        if !self.mechanisms(secure).iter().any(|m| m == mechanism) {
            return Err(PgWireError::UnsupportedSASLAuthMethod(mechanism.to_owned()));
        }
        let server = match (&self.bound, secure) {
            (Some(bound), true) => bound,
            _ => &self.plain,
        };
        let secret =
            user.and_then(|u| db.password_verifier(u)).and_then(|v| secret_of(&v)).unwrap_or_else(|| self.decoy(given));
        let (first, waiting) = server.on_client_first_message_with_secret(data, secret)?;
        Ok((first, Box::new(waiting)))
    }

    /// A verifier nobody's password matches, its salt the same each time for `given`.
    fn decoy(&self, given: &str) -> ScramSecret {
        use ring::hmac;
        let key = hmac::Key::new(hmac::HMAC_SHA256, &self.decoy_key);
        let salt = hmac::sign(&key, given.as_bytes()).as_ref()[..16].to_vec();
        let random: [u8; 32] = rand::random();
        ScramSecret::Verifier {
            salt,
            iterations: DECOY_ITERATIONS,
            stored_key: random.to_vec(),
            server_key: rand::random::<[u8; 32]>().to_vec(),
        }
    }
}

/// The iteration count of decoy verifiers: the one lioscope makes verifiers with.
const DECOY_ITERATIONS: usize = 4096;

/// A stored verifier as pgwire's exchange takes it; `None` if it is damaged.
fn secret_of(verifier: &lioscope::ScramVerifier) -> Option<ScramSecret> {
    let (salt, stored_key, server_key) = verifier.keys()?;
    Some(ScramSecret::Verifier { salt, iterations: verifier.iterations as usize, stored_key, server_key })
}

/// Where a client's log-in stands.
pub enum Progress {
    /// Not begun, or over.
    Idle,
    /// AuthenticationSASL sent; the client's first message comes next.
    AwaitingFirst,
    /// The server's first message sent; the client's proof comes next.
    AwaitingFinal(Box<ScramServerAuthWaitingForClientFinal>),
}
