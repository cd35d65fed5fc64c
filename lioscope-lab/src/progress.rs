//! A progress bar of an experiment's steps on the terminal (standard error), hidden when
//! standard error is not a terminal, so reports and tests stay clean.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// Steps of one experiment.
pub struct Steps(ProgressBar);

impl Steps {
    /// A bar of `steps` steps titled `title`.
    pub fn new(steps: u64, title: &str) -> Steps {
        let bar = ProgressBar::with_draw_target(Some(steps), ProgressDrawTarget::stderr());
        bar.set_style(
            ProgressStyle::with_template("{prefix} {bar:30} {pos}/{len} {msg} ({elapsed})")
                .unwrap_or_else(|_| ProgressStyle::default_bar()),
        );
        bar.set_prefix(title.to_owned());
        Steps(bar)
    }

    /// Starts the next step, named `what`.
    pub fn step(&self, what: &str) {
        if self.0.position() > 0 || !self.0.message().is_empty() {
            self.0.inc(1);
        }
        self.0.set_message(what.to_owned());
    }

    pub fn finish(&self) {
        self.0.finish_and_clear();
    }
}
