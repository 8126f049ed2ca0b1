//! Microstate numbering (filled by the accounting work).
