//! The errors the gateway answers a forwarded request with when it cannot
//! forward it or its upstream answered something else.

use rmcp::ErrorData;

pub(crate) fn cancelled() -> ErrorData {
    ErrorData::internal_error("the client cancelled the request", None)
}

pub(crate) fn unexpected(what: &str, method: &str) -> ErrorData {
    ErrorData::internal_error(
        format!("{what} answered {method} with another kind of result"),
        None,
    )
}

pub(crate) fn is_not_found(error: &ErrorData) -> bool {
    error.code == rmcp::model::ErrorCode::RESOURCE_NOT_FOUND
        || error.code == rmcp::model::ErrorCode::INVALID_PARAMS
}
