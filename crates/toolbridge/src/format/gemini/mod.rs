//! Gemini `generateContent`: function declarations
//! `[{"functionDeclarations":[...]}]`, `functionCall` parts and
//! `functionResponse` results.
//!
//! By default a tool's schema goes in `parameters` ([`parameters()`]), an
//! OpenAPI 3.0 subset Gemini checks strictly (`keywords`); with
//! [`FormatOptions::gemini_json_schema`](crate::format::FormatOptions::gemini_json_schema)
//! it goes in `parametersJsonSchema` ([`json_schema`]).

pub mod calls;
pub mod json_schema;
pub(crate) mod keywords;
pub mod parameters;
mod provider;
pub mod results;
pub mod tools;

pub use calls::parse_gemini;
pub use json_schema::parameters_json_schema;
pub use parameters::parameters;
pub(crate) use provider::Gemini;
pub use results::gemini_content;
pub use tools::tools;
