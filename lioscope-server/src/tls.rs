//! TLS for clients that ask for it: the server's certificate chain and private key read
//! from PEM files into rustls (through pgwire's tokio-rustls), with the protocol
//! versions and ciphers rustls allows by default (TLS 1.2 and 1.3).
//!
//! A file that is missing, holds no certificate or no key, or a key that does not match
//! the certificate is refused at start with an error naming the file.

use pgwire::tokio::TlsAcceptor;
use pgwire::tokio::tokio_rustls::rustls;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use std::io::{Error, ErrorKind};
use std::sync::Arc;

/// The acceptor for `files`, and the certificate chain's PEM text (SCRAM-SHA-256-PLUS
/// binds log-ins to it).
pub fn acceptor(files: &crate::TlsFiles) -> std::io::Result<(TlsAcceptor, Vec<u8>)> {
    let invalid =
        |path: &std::path::Path, why: String| Error::new(ErrorKind::InvalidInput, format!("{}: {why}", path.display()));
    let pem = std::fs::read(&files.certificate).map_err(|e| invalid(&files.certificate, e.to_string()))?;
    let chain: Vec<CertificateDer<'static>> = CertificateDer::pem_slice_iter(&pem)
        .collect::<Result<_, _>>()
        .map_err(|e| invalid(&files.certificate, format!("not a PEM certificate chain: {e}")))?;
    if chain.is_empty() {
        return Err(invalid(&files.certificate, "holds no certificate".into()));
    }
    let key =
        PrivateKeyDer::from_pem_file(&files.key).map_err(|e| invalid(&files.key, format!("no private key: {e}")))?;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| Error::new(ErrorKind::InvalidInput, e.to_string()))?
        .with_no_client_auth()
        .with_single_cert(chain, key)
        .map_err(|e| invalid(&files.key, format!("does not go with the certificate: {e}")))?;
    Ok((TlsAcceptor::from(Arc::new(config)), pem))
}
