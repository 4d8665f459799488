//! The kernels the `cpu` and `bench` commands report on, by backend: pbwire's runtime-dispatched
//! backend layer, re-exported (a stand-in with the same API served until it landed).

pub use pbwire::backend::{available, detected, Backend, Kernel};
