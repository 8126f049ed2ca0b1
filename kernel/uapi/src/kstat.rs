//! kstat ABI (filled by the kstat work).
