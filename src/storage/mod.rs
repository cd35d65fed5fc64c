//! On-disk structures: the control file, datafiles of fixed-size blocks, the block and
//! row formats, and segments (extent map and high-water mark).
//!
//! Nothing here counts statistics or knows about sessions; the buffer cache above reads
//! and writes blocks through [`datafile::DataFile`] and interprets them with [`block`],
//! [`row`] and [`segment`].

pub mod block;
pub mod control;
pub mod datafile;
pub mod row;
pub mod segment;
