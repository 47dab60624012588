//! rtsched-trace (see ../../docs).
