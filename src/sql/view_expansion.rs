//! The views being planned on a thread, innermost last: a view never expands inside
//! itself (ORA-01731), views nest at most [`MAX_VIEW_DEPTH`] deep, and what a view reads
//! is checked against its owner's privileges (definer's rights: `privileges` asks for
//! the innermost view's owner).

use crate::error::{Error, Result};
use std::cell::RefCell;

/// Most views a query may expand inside one another.
const MAX_VIEW_DEPTH: usize = 32;

thread_local! {
    /// The views being planned on this thread, outermost first, each with its owner:
    /// what a view reads is checked against its owner's privileges (definer's rights).
    static EXPANDING: RefCell<Vec<(String, std::sync::Arc<str>)>> = const { RefCell::new(Vec::new()) };
}

/// A view's name on the stack of views being planned, while it lives.
pub struct Expanding(());

impl Expanding {
    /// Marks view `name`, owned by `owner`, as being planned; refuses a view already
    /// being planned (a circular definition) and views nested past [`MAX_VIEW_DEPTH`].
    pub fn enter(name: &str, owner: std::sync::Arc<str>) -> Result<Expanding> {
        EXPANDING.with(|stack| {
            let mut stack = stack.borrow_mut();
            if stack.iter().any(|(n, _)| n == name) {
                return Err(Error::InvalidValue {
                    context: name.to_owned(),
                    message: "ORA-01731: circular view definition encountered".into(),
                });
            }
            if stack.len() >= MAX_VIEW_DEPTH {
                return Err(Error::unsupported(format!("views nested more than {MAX_VIEW_DEPTH} deep")));
            }
            stack.push((name.to_owned(), owner));
            Ok(Expanding(()))
        })
    }

    /// The owner of the innermost view being planned on this thread, if one is.
    pub fn owner() -> Option<std::sync::Arc<str>> {
        EXPANDING.with(|stack| stack.borrow().last().map(|(_, owner)| owner.clone()))
    }
}

impl Drop for Expanding {
    fn drop(&mut self) {
        EXPANDING.with(|stack| stack.borrow_mut().pop());
    }
}
