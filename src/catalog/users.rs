//! Database users, their password verifiers, and the privileges they hold: system
//! privileges (`CREATE SESSION`, `CREATE TABLE`, `SELECT ANY TABLE`, ...), the three
//! predefined roles (`CONNECT`, `RESOURCE`, `DBA`), and object privileges (SELECT,
//! INSERT, UPDATE, DELETE, REFERENCES) on tables and views (SELECT on sequences), as
//! Oracle spells them.
//!
//! Invariants:
//! - `SYS` always exists and can be neither dropped nor have its privileges revoked; it
//!   holds every privilege without any grant (as Oracle's SYS does).
//! - A password is never stored, only its SCRAM-SHA-256 verifier (salt, iterations,
//!   StoredKey, ServerKey; RFC 5802 and 7677, as PostgreSQL keeps them): enough to check a
//!   client's proof, not enough to log in as the user elsewhere.
//! - Every object has one owner (the user who created it; objects made before users
//!   existed belong to SYS); its owner holds every privilege on it.

use crate::error::{Error, Result};
use std::collections::{BTreeMap, BTreeSet};

/// The user every embedded session runs as, who holds every privilege.
pub const SYS: &str = "SYS";

/// The grantee that stands for every user.
pub const PUBLIC: &str = "PUBLIC";

/// The iteration count new verifiers are made with (PostgreSQL's default).
pub const SCRAM_ITERATIONS: u32 = 4096;

/// A privilege to do something anywhere in the database, granted to a user.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize)]
pub enum SystemPrivilege {
    CreateSession,
    CreateTable,
    CreateAnyTable,
    AlterAnyTable,
    DropAnyTable,
    SelectAnyTable,
    InsertAnyTable,
    UpdateAnyTable,
    DeleteAnyTable,
    CreateAnyIndex,
    DropAnyIndex,
    AnalyzeAny,
    CreateView,
    CreateAnyView,
    DropAnyView,
    CreateSequence,
    CreateAnySequence,
    AlterAnySequence,
    DropAnySequence,
    SelectAnySequence,
    SelectAnyDictionary,
    /// Reading the server's files (COPY ... FROM 'file'), as Oracle's directory objects
    /// over any path.
    CreateAnyDirectory,
    CreateUser,
    AlterUser,
    DropUser,
    AlterSystem,
    GrantAnyPrivilege,
    GrantAnyObjectPrivilege,
    GrantAnyRole,
}

impl SystemPrivilege {
    /// Every system privilege, in the order `SESSION_PRIVS` lists them.
    pub const ALL: [SystemPrivilege; 29] = [
        SystemPrivilege::CreateSession,
        SystemPrivilege::CreateTable,
        SystemPrivilege::CreateAnyTable,
        SystemPrivilege::AlterAnyTable,
        SystemPrivilege::DropAnyTable,
        SystemPrivilege::SelectAnyTable,
        SystemPrivilege::InsertAnyTable,
        SystemPrivilege::UpdateAnyTable,
        SystemPrivilege::DeleteAnyTable,
        SystemPrivilege::CreateAnyIndex,
        SystemPrivilege::DropAnyIndex,
        SystemPrivilege::AnalyzeAny,
        SystemPrivilege::CreateView,
        SystemPrivilege::CreateAnyView,
        SystemPrivilege::DropAnyView,
        SystemPrivilege::CreateSequence,
        SystemPrivilege::CreateAnySequence,
        SystemPrivilege::AlterAnySequence,
        SystemPrivilege::DropAnySequence,
        SystemPrivilege::SelectAnySequence,
        SystemPrivilege::SelectAnyDictionary,
        SystemPrivilege::CreateAnyDirectory,
        SystemPrivilege::CreateUser,
        SystemPrivilege::AlterUser,
        SystemPrivilege::DropUser,
        SystemPrivilege::AlterSystem,
        SystemPrivilege::GrantAnyPrivilege,
        SystemPrivilege::GrantAnyObjectPrivilege,
        SystemPrivilege::GrantAnyRole,
    ];

    /// The privilege's name as GRANT spells it ("CREATE SESSION").
    pub fn name(self) -> &'static str {
        match self {
            SystemPrivilege::CreateSession => "CREATE SESSION",
            SystemPrivilege::CreateTable => "CREATE TABLE",
            SystemPrivilege::CreateAnyTable => "CREATE ANY TABLE",
            SystemPrivilege::AlterAnyTable => "ALTER ANY TABLE",
            SystemPrivilege::DropAnyTable => "DROP ANY TABLE",
            SystemPrivilege::SelectAnyTable => "SELECT ANY TABLE",
            SystemPrivilege::InsertAnyTable => "INSERT ANY TABLE",
            SystemPrivilege::UpdateAnyTable => "UPDATE ANY TABLE",
            SystemPrivilege::DeleteAnyTable => "DELETE ANY TABLE",
            SystemPrivilege::CreateAnyIndex => "CREATE ANY INDEX",
            SystemPrivilege::DropAnyIndex => "DROP ANY INDEX",
            SystemPrivilege::AnalyzeAny => "ANALYZE ANY",
            SystemPrivilege::CreateView => "CREATE VIEW",
            SystemPrivilege::CreateAnyView => "CREATE ANY VIEW",
            SystemPrivilege::DropAnyView => "DROP ANY VIEW",
            SystemPrivilege::CreateSequence => "CREATE SEQUENCE",
            SystemPrivilege::CreateAnySequence => "CREATE ANY SEQUENCE",
            SystemPrivilege::AlterAnySequence => "ALTER ANY SEQUENCE",
            SystemPrivilege::DropAnySequence => "DROP ANY SEQUENCE",
            SystemPrivilege::SelectAnySequence => "SELECT ANY SEQUENCE",
            SystemPrivilege::SelectAnyDictionary => "SELECT ANY DICTIONARY",
            SystemPrivilege::CreateAnyDirectory => "CREATE ANY DIRECTORY",
            SystemPrivilege::CreateUser => "CREATE USER",
            SystemPrivilege::AlterUser => "ALTER USER",
            SystemPrivilege::DropUser => "DROP USER",
            SystemPrivilege::AlterSystem => "ALTER SYSTEM",
            SystemPrivilege::GrantAnyPrivilege => "GRANT ANY PRIVILEGE",
            SystemPrivilege::GrantAnyObjectPrivilege => "GRANT ANY OBJECT PRIVILEGE",
            SystemPrivilege::GrantAnyRole => "GRANT ANY ROLE",
        }
    }

    /// The privilege named `words` (upper case, single spaces), if one is.
    pub fn named(words: &str) -> Option<SystemPrivilege> {
        SystemPrivilege::ALL.into_iter().find(|p| p.name() == words)
    }
}

/// A privilege on one table or view (SELECT also on a sequence).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize)]
pub enum ObjectPrivilege {
    Select,
    Insert,
    Update,
    Delete,
    /// Declaring a foreign key that refers to the table.
    References,
}

impl ObjectPrivilege {
    /// What `GRANT ALL [PRIVILEGES] ON object` grants.
    pub const ALL: [ObjectPrivilege; 5] = [
        ObjectPrivilege::Select,
        ObjectPrivilege::Insert,
        ObjectPrivilege::Update,
        ObjectPrivilege::Delete,
        ObjectPrivilege::References,
    ];

    pub fn name(self) -> &'static str {
        match self {
            ObjectPrivilege::Select => "SELECT",
            ObjectPrivilege::Insert => "INSERT",
            ObjectPrivilege::Update => "UPDATE",
            ObjectPrivilege::Delete => "DELETE",
            ObjectPrivilege::References => "REFERENCES",
        }
    }

    pub fn named(word: &str) -> Option<ObjectPrivilege> {
        ObjectPrivilege::ALL.into_iter().find(|p| p.name() == word)
    }

    /// The system privilege that grants this one on every table ("SELECT ANY TABLE"), if
    /// one does (none grants REFERENCES everywhere, as in Oracle).
    pub fn on_any_table(self) -> Option<SystemPrivilege> {
        match self {
            ObjectPrivilege::Select => Some(SystemPrivilege::SelectAnyTable),
            ObjectPrivilege::Insert => Some(SystemPrivilege::InsertAnyTable),
            ObjectPrivilege::Update => Some(SystemPrivilege::UpdateAnyTable),
            ObjectPrivilege::Delete => Some(SystemPrivilege::DeleteAnyTable),
            ObjectPrivilege::References => None,
        }
    }
}

/// A predefined role: a named set of system privileges granted as one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize)]
pub enum Role {
    /// `CREATE SESSION`.
    Connect,
    /// `CREATE TABLE`, `CREATE SEQUENCE`.
    Resource,
    /// Every system privilege.
    Dba,
}

impl Role {
    pub const ALL: [Role; 3] = [Role::Connect, Role::Resource, Role::Dba];

    pub fn name(self) -> &'static str {
        match self {
            Role::Connect => "CONNECT",
            Role::Resource => "RESOURCE",
            Role::Dba => "DBA",
        }
    }

    pub fn named(word: &str) -> Option<Role> {
        Role::ALL.into_iter().find(|r| r.name() == word)
    }

    /// The system privileges the role carries.
    pub fn privileges(self) -> &'static [SystemPrivilege] {
        match self {
            Role::Connect => &[SystemPrivilege::CreateSession],
            Role::Resource => &[SystemPrivilege::CreateTable, SystemPrivilege::CreateSequence],
            Role::Dba => &SystemPrivilege::ALL,
        }
    }
}

/// What a client must prove it knows: a password's SCRAM-SHA-256 verifier.
#[derive(Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ScramVerifier {
    /// Hex of the random salt.
    pub salt: String,
    pub iterations: u32,
    /// Hex of `SHA-256(HMAC(SaltedPassword, "Client Key"))`.
    pub stored_key: String,
    /// Hex of `HMAC(SaltedPassword, "Server Key")`.
    pub server_key: String,
}

impl std::fmt::Debug for ScramVerifier {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ScramVerifier").field("iterations", &self.iterations).finish_non_exhaustive()
    }
}

impl ScramVerifier {
    /// The verifier of `password` with a new random salt.
    pub fn of_password(password: &str) -> Result<ScramVerifier> {
        let mut salt = [0u8; 16];
        ring::rand::SecureRandom::fill(&ring::rand::SystemRandom::new(), &mut salt).map_err(|_| {
            Error::io("read a password's salt from", "the system's random source", std::io::Error::other("failed"))
        })?;
        Ok(ScramVerifier::with_salt(password, &salt, SCRAM_ITERATIONS))
    }

    /// The verifier of `password` with `salt`: the password normalized by SASLprep (as
    /// clients do; a password SASLprep refuses is used as its bytes, as PostgreSQL does).
    pub fn with_salt(password: &str, salt: &[u8], iterations: u32) -> ScramVerifier {
        let normalized = stringprep::saslprep(password).map(|p| p.into_owned()).unwrap_or_else(|_| password.to_owned());
        let mut salted = [0u8; 32];
        let rounds = std::num::NonZeroU32::new(iterations.max(1)).expect("at least one round");
        ring::pbkdf2::derive(ring::pbkdf2::PBKDF2_HMAC_SHA256, rounds, salt, normalized.as_bytes(), &mut salted);
        let key = ring::hmac::Key::new(ring::hmac::HMAC_SHA256, &salted);
        let client_key = ring::hmac::sign(&key, b"Client Key");
        let stored_key = ring::digest::digest(&ring::digest::SHA256, client_key.as_ref());
        let server_key = ring::hmac::sign(&key, b"Server Key");
        ScramVerifier {
            salt: hex(salt),
            iterations,
            stored_key: hex(stored_key.as_ref()),
            server_key: hex(server_key.as_ref()),
        }
    }

    /// The salt, StoredKey and ServerKey as bytes; `None` if the stored hex is damaged.
    pub fn keys(&self) -> Option<(Vec<u8>, Vec<u8>, Vec<u8>)> {
        Some((unhex(&self.salt)?, unhex(&self.stored_key)?, unhex(&self.server_key)?))
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn unhex(text: &str) -> Option<Vec<u8>> {
    if !text.len().is_multiple_of(2) {
        return None;
    }
    (0..text.len()).step_by(2).map(|i| u8::from_str_radix(text.get(i..i + 2)?, 16).ok()).collect()
}

/// One user: how it authenticates and what it was granted.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct UserDef {
    pub name: String,
    /// When it was created (seconds since 1970).
    pub created: i64,
    /// `None`: no password was given, so the user cannot log in with one.
    #[serde(default)]
    pub password: Option<ScramVerifier>,
    /// `ACCOUNT LOCK`: no new session may log in as it.
    #[serde(default)]
    pub locked: bool,
    /// Granted system privileges, each with whether it was granted WITH ADMIN OPTION.
    #[serde(default)]
    pub system_privileges: BTreeMap<SystemPrivilege, bool>,
    /// Granted roles, each with whether it was granted WITH ADMIN OPTION.
    #[serde(default)]
    pub roles: BTreeMap<Role, bool>,
}

impl UserDef {
    pub fn new(name: String, created: i64, password: Option<ScramVerifier>) -> UserDef {
        UserDef { name, created, password, locked: false, system_privileges: BTreeMap::new(), roles: BTreeMap::new() }
    }

    /// Whether it holds `privilege`, directly or through a role.
    pub fn has(&self, privilege: SystemPrivilege) -> bool {
        self.name == SYS
            || self.system_privileges.contains_key(&privilege)
            || self.roles.keys().any(|r| r.privileges().contains(&privilege))
    }

    /// Whether it may grant `privilege` to others.
    pub fn may_grant(&self, privilege: SystemPrivilege) -> bool {
        self.has(SystemPrivilege::GrantAnyPrivilege) || self.system_privileges.get(&privilege) == Some(&true)
    }

    /// Whether it may grant `role` to others.
    pub fn may_grant_role(&self, role: Role) -> bool {
        self.has(SystemPrivilege::GrantAnyRole) || self.roles.get(&role) == Some(&true)
    }

    /// Every system privilege it holds, directly or through its roles (`SESSION_PRIVS`).
    pub fn effective_privileges(&self) -> BTreeSet<SystemPrivilege> {
        SystemPrivilege::ALL.into_iter().filter(|p| self.has(*p)).collect()
    }

    /// Checks what opening relies on; the error names the field.
    pub(super) fn check(&self, key: &str) -> std::result::Result<(), String> {
        if self.name != key {
            return Err(format!("name {} is not its key", self.name));
        }
        let well_formed = |v: &ScramVerifier| {
            v.keys().is_some_and(|(salt, stored, server)| !salt.is_empty() && stored.len() == 32 && server.len() == 32)
                && v.iterations > 0
        };
        if let Some(verifier) = &self.password
            && !well_formed(verifier)
        {
            return Err("password: not a SCRAM-SHA-256 verifier".into());
        }
        Ok(())
    }
}

/// The object privileges granted on one object: grantee → privilege → grantable.
pub type ObjectGrants = BTreeMap<String, BTreeMap<ObjectPrivilege, bool>>;

#[cfg(test)]
mod tests {
    use super::*;

    /// RFC 7677's example exchange (user "user", password "pencil", 4096 iterations):
    /// the verifier checks the RFC's client proof and gives the RFC's server signature.
    #[test]
    fn verifier_checks_rfc_7677_exchange() {
        let salt = unhex("5b6d99689d12358eeca04b141236fa81").unwrap();
        let v = ScramVerifier::with_salt("pencil", &salt, 4096);
        let (_, stored, server) = v.keys().unwrap();
        let auth_message = "n=user,r=rOprNGfwEbeRWgbNEkqO,\
            r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096,\
            c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0";
        let proof = unhex("747cdb65aa56224e2352137e52d7bdcad6a0f738df30782caa69a2cfb0277554").unwrap();
        let signature =
            ring::hmac::sign(&ring::hmac::Key::new(ring::hmac::HMAC_SHA256, &stored), auth_message.as_bytes());
        let client_key: Vec<u8> = proof.iter().zip(signature.as_ref()).map(|(a, b)| a ^ b).collect();
        assert_eq!(ring::digest::digest(&ring::digest::SHA256, &client_key).as_ref(), stored.as_slice());
        let server_signature =
            ring::hmac::sign(&ring::hmac::Key::new(ring::hmac::HMAC_SHA256, &server), auth_message.as_bytes());
        assert_eq!(hex(server_signature.as_ref()), "eabae24d1062db75a9451ff0b6ea7e98c8546549ff741e672d3251b2397de46e");
        assert_ne!(v, ScramVerifier::with_salt("pencil2", &salt, 4096));
    }

    #[test]
    fn hex_round_trips_and_refuses_damage() {
        assert_eq!(unhex(&hex(&[0, 1, 254, 255])), Some(vec![0, 1, 254, 255]));
        assert_eq!(unhex("abc"), None);
        assert_eq!(unhex("zz"), None);
    }

    #[test]
    fn roles_carry_their_privileges() {
        let mut u = UserDef::new("SCOTT".into(), 0, None);
        assert!(!u.has(SystemPrivilege::CreateSession));
        u.roles.insert(Role::Connect, false);
        assert!(u.has(SystemPrivilege::CreateSession));
        assert!(!u.has(SystemPrivilege::CreateTable));
        u.roles.insert(Role::Dba, false);
        assert!(u.has(SystemPrivilege::DropUser));
        assert!(UserDef::new(SYS.into(), 0, None).has(SystemPrivilege::AlterSystem));
    }
}
