//! The built-in example MCP server: the spec's "minimal stdio server", in
//! Rust, run by `toolbridge example-server`.
//!
//! Tools: `hello {name}`, `echo {text}`, `tiny_image` (a 4×4 PNG),
//! `tiny_audio` (a 50 ms WAV), `slow {ms}` (sleeps, reporting progress when
//! the caller gave a progress token, and stops when cancelled). Any other
//! tool name gets an `isError` result `Unknown tool: NAME`. Started with
//! `--skill` ([`ExampleServer::with_skill`]), it also serves one skill
//! (SEP-2640) and that skill's `SKILL.md` as a resource ([`skill`]).
//!
//! It is built to be fast, because benchmarks use it as the peer: the tool
//! router is built once and stored, and stdio goes through rmcp's
//! non-blocking pipe variant rather than the blocking-pool `stdio()`.

use std::{sync::Arc, time::Duration};

use base64::Engine as _;
use rmcp::{
    ErrorData, RoleServer, ServerHandler, ServiceExt,
    handler::server::{router::tool::ToolRouter, tool::ToolCallContext, wrapper::Parameters},
    model::{
        CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock,
        GetSkillRequestParams, GetSkillResult, Implementation, ListResourcesResult,
        ListSkillsResult, ListToolsResult, PaginatedRequestParams, ProgressNotificationParam,
        ReadResourceRequestParams, ReadResourceResponse, ServerCapabilities, ServerConfig,
    },
    schemars,
    service::RequestContext,
    tool, tool_router,
};
use serde::Deserialize;

mod lines;
pub mod skill;

use lines::ServerLines;

/// A 4×4 RGB PNG (red, green, blue, yellow columns).
const TINY_PNG_BASE64: &str = "iVBORw0KGgoAAAANSUhEUgAAAAQAAAAECAIAAAAmkwkpAAAAFElEQVR4nGP4z8DAAMb//0MZBDkA+EkT7YP5CsUAAAAASUVORK5CYII=";

/// Arguments of `hello`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct HelloArgs {
    /// Name to greet.
    pub name: String,
}

/// Arguments of `echo`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct EchoArgs {
    /// Text to send back unchanged.
    pub text: String,
}

/// Arguments of `slow`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct SlowArgs {
    /// How long to take, in milliseconds.
    pub ms: u64,
}

/// The example server. Cheap to clone: the router is shared.
#[derive(Clone)]
pub struct ExampleServer {
    /// Built once in [`ExampleServer::new`]; `list_tools` and `call_tool`
    /// use it directly instead of rebuilding the router (and every tool's
    /// schema) per request.
    tool_router: Arc<ToolRouter<ExampleServer>>,
    /// Whether it serves [`skill`] too.
    skill: bool,
}

impl Default for ExampleServer {
    fn default() -> Self {
        Self::new()
    }
}

#[tool_router]
impl ExampleServer {
    /// A new server with its router built.
    pub fn new() -> Self {
        ExampleServer {
            tool_router: Arc::new(Self::tool_router()),
            skill: false,
        }
    }

    /// The same server, also serving its one skill (the skills extension,
    /// and its `SKILL.md` as a resource).
    pub fn with_skill(mut self) -> Self {
        self.skill = true;
        self
    }

    /// Return a greeting.
    #[tool(description = "Return a greeting")]
    fn hello(&self, Parameters(HelloArgs { name }): Parameters<HelloArgs>) -> String {
        format!("Hello, {name}!")
    }

    /// Echo the text back.
    #[tool(description = "Echo the text back unchanged")]
    fn echo(&self, Parameters(EchoArgs { text }): Parameters<EchoArgs>) -> String {
        text
    }

    /// A tiny PNG image.
    #[tool(description = "Return a tiny 4x4 PNG image")]
    fn tiny_image(&self) -> CallToolResult {
        CallToolResult::success(vec![ContentBlock::image(TINY_PNG_BASE64, "image/png")])
    }

    /// A short WAV sound.
    #[tool(description = "Return a 50 ms WAV sound (a 440 Hz tone)")]
    fn tiny_audio(&self) -> CallToolResult {
        let wav = base64::engine::general_purpose::STANDARD.encode(tiny_wav());
        CallToolResult::success(vec![ContentBlock::audio(wav, "audio/wav")])
    }

    /// Sleep, reporting progress, until done or cancelled.
    #[tool(description = "Sleep for ms milliseconds, reporting progress every 100 ms")]
    async fn slow(
        &self,
        Parameters(SlowArgs { ms }): Parameters<SlowArgs>,
        context: RequestContext<RoleServer>,
    ) -> Result<String, ErrorData> {
        let token = context.meta.get_progress_token();
        let total = Duration::from_millis(ms);
        let step = Duration::from_millis(100);
        let start = tokio::time::Instant::now();
        let mut elapsed = Duration::ZERO;
        while elapsed < total {
            let wait = step.min(total - elapsed);
            tokio::select! {
                _ = tokio::time::sleep(wait) => {}
                _ = context.ct.cancelled() => {
                    eprintln!("slow: cancelled after {} ms", start.elapsed().as_millis());
                    return Err(ErrorData::internal_error("cancelled", None));
                }
            }
            elapsed += wait;
            if let Some(token) = &token {
                let mut progress =
                    ProgressNotificationParam::new(token.clone(), elapsed.as_millis() as f64);
                progress.total = Some(ms as f64);
                let _ = context.peer.notify_progress(progress).await;
            }
        }
        Ok(format!("slept {ms} ms"))
    }
}

impl ServerHandler for ExampleServer {
    fn get_info(&self) -> ServerConfig {
        let capabilities = if self.skill {
            ServerCapabilities::builder()
                .enable_tools()
                .enable_resources()
                .enable_skills()
                .build()
        } else {
            ServerCapabilities::builder().enable_tools().build()
        };
        ServerConfig::new(capabilities).with_server_info(Implementation::new(
            "toolbridge-example",
            env!("CARGO_PKG_VERSION"),
        ))
    }

    // rmcp answers -32601 for the skills methods of a server that does not
    // declare the extension, so these are reached only with `--skill`.
    async fn list_skills(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListSkillsResult, ErrorData> {
        Ok(skill::list())
    }

    async fn get_skill(
        &self,
        request: GetSkillRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetSkillResult, ErrorData> {
        skill::get(&request.uri)
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        if !self.skill {
            return Err(ErrorData::method_not_found::<
                rmcp::model::ListResourcesRequestMethod,
            >());
        }
        Ok(ListResourcesResult::with_all_items(vec![skill::resource()]))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        match self.skill.then(|| skill::read(&request.uri)).flatten() {
            Some(read) => Ok(read.into()),
            None => Err(ErrorData::resource_not_found(
                format!("no resource {}", request.uri),
                None,
            )),
        }
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(self.tool_router.list_all()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        if !self.tool_router.has_route(&request.name) {
            let text = format!("Unknown tool: {}", request.name);
            return Ok(CallToolResponse::Complete(CallToolResult::error(vec![
                ContentBlock::text(text),
            ])));
        }
        let call = ToolCallContext::new(self, request, context);
        self.tool_router.call(call).await
    }
}

/// A 50 ms, 8 kHz, 8-bit mono WAV of a 440 Hz tone.
pub fn tiny_wav() -> Vec<u8> {
    const RATE: u32 = 8000;
    let samples: Vec<u8> = (0..RATE / 20)
        .map(|i| {
            let t = i as f64 / RATE as f64;
            (128.0 + 100.0 * (2.0 * std::f64::consts::PI * 440.0 * t).sin()) as u8
        })
        .collect();
    let data_len = samples.len() as u32;
    let mut wav = Vec::with_capacity(44 + samples.len());
    wav.extend_from_slice(b"RIFF");
    wav.extend_from_slice(&(36 + data_len).to_le_bytes());
    wav.extend_from_slice(b"WAVEfmt ");
    wav.extend_from_slice(&16u32.to_le_bytes()); // fmt chunk size
    wav.extend_from_slice(&1u16.to_le_bytes()); // PCM
    wav.extend_from_slice(&1u16.to_le_bytes()); // mono
    wav.extend_from_slice(&RATE.to_le_bytes());
    wav.extend_from_slice(&RATE.to_le_bytes()); // byte rate
    wav.extend_from_slice(&1u16.to_le_bytes()); // block align
    wav.extend_from_slice(&8u16.to_le_bytes()); // bits per sample
    wav.extend_from_slice(b"data");
    wav.extend_from_slice(&data_len.to_le_bytes());
    wav.extend_from_slice(&samples);
    wav
}

/// Serves the example server on this process's stdin/stdout until the client
/// closes stdin: rmcp's non-blocking pipe handles (its plain `stdio()` goes
/// through the blocking pool), framed by `ServerLines`, which writes a burst
/// of responses at once and parses `tools/call` requests directly.
pub async fn serve_stdio() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    serve_stdio_as(ExampleServer::new()).await
}

/// [`serve_stdio`] with `server` (say, [`ExampleServer::with_skill`]).
pub async fn serve_stdio_as(
    server: ExampleServer,
) -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    let (stdin, stdout) = rmcp::transport::stdio_pipes();
    let service = server.serve(ServerLines::new(stdin, stdout)).await?;
    service.waiting().await?;
    Ok(())
}
