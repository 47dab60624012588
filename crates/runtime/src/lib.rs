//! The runtime (see docs/runtime.md).
