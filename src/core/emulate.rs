//! Tool-choice emulation through a JSON-schema response format (to be written).
