//! One module per subcommand.

pub mod sandbox;
