//! rtsched-policy (see ../../docs).
