//! One module per subcommand.

pub mod listen;
pub mod sandbox;
