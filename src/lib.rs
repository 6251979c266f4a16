pub mod decode;
pub mod source;
