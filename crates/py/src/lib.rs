//! Python bindings (see python/rtsched).
