//! rtsched-sim (see ../../docs).
