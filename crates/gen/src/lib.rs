//! rtsched-gen (see ../../docs).
