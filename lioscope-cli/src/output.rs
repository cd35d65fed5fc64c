//! Where a runner writes: results (rows, messages, PROMPT text, echoed statements) and
//! error reports. The shell and `lioscope sql` write to the terminal, results on stdout
//! and errors on stderr, as each statement ends; tests keep both in one [`Transcript`],
//! in the order they were written.
//!
//! A write that fails (a closed pipe) is dropped: the statements still run, as they
//! would with nobody reading.

use std::cell::RefCell;
use std::io::Write;
use std::rc::Rc;

/// The two streams of a runner.
pub struct Output {
    results: Box<dyn Write>,
    errors: Box<dyn Write>,
}

impl Output {
    /// Results on stdout, errors on stderr.
    pub fn terminal() -> Output {
        Output { results: Box::new(std::io::stdout()), errors: Box::new(std::io::stderr()) }
    }

    /// Both streams into one transcript in memory, read with [`Transcript::take`].
    pub fn transcript() -> (Output, Transcript) {
        let transcript = Transcript::default();
        (Output { results: Box::new(transcript.clone()), errors: Box::new(transcript.clone()) }, transcript)
    }

    pub(super) fn result(&mut self, text: &str) {
        let _ = self.results.write_all(text.as_bytes());
        let _ = self.results.flush();
    }

    pub(super) fn error(&mut self, text: &str) {
        let _ = self.errors.write_all(text.as_bytes());
        let _ = self.errors.flush();
    }
}

/// What a runner wrote, results and errors in order.
#[derive(Clone, Default)]
pub struct Transcript(Rc<RefCell<Vec<u8>>>);

impl Transcript {
    /// What was written since the last take.
    pub fn take(&self) -> String {
        String::from_utf8_lossy(&std::mem::take(&mut *self.0.borrow_mut())).into_owned()
    }
}

impl Write for Transcript {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0.borrow_mut().extend_from_slice(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}
