pub mod pb;
