//! One client connection: the protocol's handlers (startup, simple and extended query)
//! over its [`Backend`], and the registry that lets a cancel request, which comes on a
//! connection of its own, find the session to stop.
//!
//! A connection is a lioscope session from accept to close: it runs as no user until
//! the client logs in (SCRAM or trust, `authentication`), then as the lioscope user it
//! proved it is; its SID is the process id the client is given for cancel requests, and
//! `v$session` shows that user, the client's `application_name` and address. Statements run on the connection's own thread, one
//! at a time (on a blocking thread while a statement timeout is set, so that the clock
//! is watched); a statement timeout or a cancel request interrupts the running call
//! through the session's canceller (ORA-01013, SQLSTATE 57014). Bind and Execute queue
//! their answers for the Sync, which sends them with ReadyForQuery in one write. When
//! the connection goes, its session goes with it, rolling back what it left
//! uncommitted; a statement still running then is interrupted first.

use crate::Shared;
use crate::authentication::{Auth, Progress};
use crate::backend::{Backend, Described, Effect, Failure, Reply, counted_tag};
use crate::catalog_queries::Translated;
use crate::settings::Settings;
use crate::sqlstate;
use crate::wire_types;
use async_trait::async_trait;
use bytes::BytesMut;
use futures::StreamExt;
use futures::{Sink, SinkExt, stream};
use lioscope::types::Value;
use lioscope::{Canceller, Session};
use pgwire::api::DEFAULT_NAME;
use pgwire::api::auth::{LoginInfo, StartupHandler, protocol_negotiation, save_startup_parameters_to_metadata};
use pgwire::api::copy::CopyHandler;
use pgwire::api::portal::PortalExecutionState;
use pgwire::api::portal::{Format, Portal};
use pgwire::api::query::{ExtendedQueryHandler, SimpleQueryHandler};
use pgwire::api::results::{CopyResponse, FieldFormat, FieldInfo, QueryResponse, Response, Tag};
use pgwire::api::stmt::{QueryParser, StoredStatement};
use pgwire::api::store::{Entry, PortalStore};
use pgwire::api::{ClientInfo, ClientPortalStore, PgWireConnectionState, PgWireServerHandlers, Type};
use pgwire::error::{ErrorInfo, PgWireError, PgWireResult};
use pgwire::messages::copy::{CopyData, CopyDone, CopyFail};
use pgwire::messages::data::DataRow;
use pgwire::messages::data::{NoData, ParameterDescription, RowDescription};
use pgwire::messages::extendedquery::{
    Bind, BindComplete, Close, CloseComplete, Describe, Execute, Parse, ParseComplete, PortalSuspended,
};
use pgwire::messages::response::{CommandComplete, EmptyQueryResponse};
use pgwire::messages::response::{NoticeResponse, ReadyForQuery, TransactionStatus};
use pgwire::messages::startup::{
    Authentication, BackendKeyData, ParameterStatus, PasswordMessageFamily, SecretKey, Startup,
};
use pgwire::messages::{PgWireBackendMessage, PgWireFrontendMessage};
use std::fmt::Debug;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};

/// A statement as the protocol stores it (Parse) and binds it (Bind).
pub type Statement = Arc<Described>;

/// One connection's handlers: what pgwire calls for each of its messages.
pub struct Connection {
    shared: Arc<Shared>,
    backend: Arc<Mutex<Backend>>,
    canceller: Canceller,
    secret: i32,
    /// Whether the connection counts towards `--max-connections` (from its startup).
    counted: std::sync::atomic::AtomicBool,
    /// Where the client's log-in stands.
    login: Mutex<Progress>,
    parser: Arc<Parser>,
}

impl Connection {
    pub fn new(shared: Arc<Shared>, session: Session, peer: &str) -> Arc<Connection> {
        let canceller = session.canceller();
        let backend = Arc::new(Mutex::new(Backend::new(session, Settings::new("", peer, &[]))));
        Arc::new(Connection {
            shared,
            parser: Arc::new(Parser { backend: backend.clone() }),
            backend,
            canceller,
            secret: rand::random(),
            counted: Default::default(),
            login: Mutex::new(Progress::Idle),
        })
    }

    fn pid(&self) -> i32 {
        self.canceller.sid() as i32
    }

    /// Runs `work` on the backend, interrupting it at the connection's statement
    /// timeout. Without a timeout it runs here, on the connection's own thread: no
    /// hand-over to another thread per statement. With one, it runs on a blocking
    /// thread while the connection watches the clock.
    async fn call<T: Send + 'static>(
        &self,
        work: impl FnOnce(&mut Backend) -> T + Send + 'static,
    ) -> PgWireResult<(T, bool)> {
        let backend = self.backend.clone();
        let timeout = backend.lock().map_err(|_| poisoned())?.settings.statement_timeout();
        let Some(limit) = timeout else {
            let mut backend = backend.lock().map_err(|_| poisoned())?;
            return Ok((work(&mut backend), false));
        };
        let mut task = tokio::task::spawn_blocking(move || {
            let mut backend = backend.lock().map_err(|_| poisoned())?;
            Ok::<T, PgWireError>(work(&mut backend))
        });
        let mut timed_out = false;
        let outcome = match tokio::time::timeout(limit, &mut task).await {
            Ok(done) => done,
            Err(_) => {
                timed_out = true;
                // Asked again until the work ends: a request made before its call began
                // (the blocking thread late to start it) stops nothing.
                loop {
                    self.canceller.cancel();
                    if let Ok(done) = tokio::time::timeout(RECANCEL_EVERY, &mut task).await {
                        break done;
                    }
                }
            }
        };
        let value = outcome.map_err(|e| PgWireError::ApiError(Box::new(e)))??;
        Ok((value, timed_out))
    }
}

impl Drop for Connection {
    fn drop(&mut self) {
        // The client is gone: stop what its session still runs, so that dropping the
        // session rolls its transaction back at once.
        self.canceller.cancel();
        self.shared.cancels.lock().expect("cancel registry").remove(&self.pid());
        if self.counted.load(Ordering::Relaxed) {
            self.shared.connections.fetch_sub(1, Ordering::Relaxed);
        }
    }
}

/// How often a timed-out statement is asked again to stop while it still runs.
const RECANCEL_EVERY: std::time::Duration = std::time::Duration::from_millis(50);

fn poisoned() -> PgWireError {
    sqlstate::user_error("XX000", "the connection's session failed in an earlier call")
}

/// The ERROR a failure is sent as.
fn failure_info(failure: &Failure, timed_out: bool) -> ErrorInfo {
    match failure {
        Failure::Engine(lioscope::Error::Cancelled) if timed_out => ErrorInfo::new(
            "ERROR".into(),
            "57014".into(),
            "ORA-01013: user requested cancel of current operation (canceling statement due to statement timeout)"
                .into(),
        ),
        Failure::Engine(e) => sqlstate::error_info(e),
        Failure::Server { code, message } => ErrorInfo::new("ERROR".into(), (*code).into(), message.clone()),
    }
}

async fn send_notices<C>(client: &mut C, reply: &Reply) -> PgWireResult<()>
where
    C: Sink<PgWireBackendMessage> + Unpin + Send,
    C::Error: Debug,
    PgWireError: From<<C as Sink<PgWireBackendMessage>>::Error>,
{
    for notice in &reply.notices {
        let info = ErrorInfo::new(notice.severity.into(), notice.code.into(), notice.message.clone());
        client.feed(PgWireBackendMessage::NoticeResponse(NoticeResponse::from(info))).await?;
    }
    Ok(())
}

/// A reply as the protocol's response: rows described by `fields` (typed `types`), or
/// the command's tag and its effect on the transaction status.
fn response(reply: Reply, fields: Option<Arc<Vec<FieldInfo>>>) -> PgWireResult<Response> {
    let Some((columns, rows)) = reply.rows else {
        let tag = Tag::new(&reply.tag);
        return Ok(match reply.effect {
            Effect::Started => Response::TransactionStart(tag),
            Effect::Ended => Response::TransactionEnd(tag),
            Effect::None => Response::Execution(tag),
            Effect::CopyIn => Response::CopyIn(CopyResponse::new(0, 0, stream::empty())),
        });
    };
    let fields = match fields {
        Some(fields) if fields.len() == columns.len() => fields,
        _ => Arc::new(
            columns
                .iter()
                .enumerate()
                .map(|(i, name)| {
                    let t = match reply.booleans.get(i) {
                        Some(true) => Type::BOOL,
                        _ => wire_types::type_of_values(rows.iter().map(|r| &r[i])),
                    };
                    FieldInfo::new(wire_types::column_name(name), None, None, t, FieldFormat::Text)
                })
                .collect(),
        ),
    };
    let encoded: Vec<PgWireResult<DataRow>> = rows
        .iter()
        .map(|row| {
            let mut data = BytesMut::with_capacity(16 * row.len());
            for (value, field) in row.iter().zip(fields.iter()) {
                wire_types::put_field(&mut data, value, field.datatype(), field.format() == FieldFormat::Binary)
                    .map_err(|m| sqlstate::user_error("22000", m))?;
            }
            Ok(DataRow::new(data, row.len() as i16))
        })
        .collect();
    let mut query = QueryResponse::new(fields, stream::iter(encoded));
    query.set_command_tag(reply.tag.split_whitespace().next().unwrap_or("SELECT"));
    Ok(Response::Query(query))
}

/// The fields a described query's rows are sent with, in `format`: made once per
/// statement for all-text and all-binary results (a prepared statement's every
/// execution describes its portal), each time for a mix.
fn fields_of(described: &Described, format: Option<&Format>) -> Arc<Vec<FieldInfo>> {
    let slot = match format {
        None | Some(Format::UnifiedText) => Some(0),
        Some(Format::UnifiedBinary) => Some(1),
        Some(Format::Individual(_)) => None,
    };
    match slot {
        Some(slot) => described.fields[slot].get_or_init(|| Arc::new(make_fields(described, format))).clone(),
        None => Arc::new(make_fields(described, format)),
    }
}

fn make_fields(described: &Described, format: Option<&Format>) -> Vec<FieldInfo> {
    let Some(columns) = &described.columns else { return Vec::new() };
    columns
        .iter()
        .enumerate()
        .map(|(i, (name, t))| {
            let format = format.map_or(FieldFormat::Text, |f| f.format_for(i));
            if described.booleans.get(i) == Some(&true) {
                return FieldInfo::new(wire_types::column_name(name), None, None, Type::BOOL, format);
            }
            FieldInfo::new(wire_types::column_name(name), None, None, wire_types::pg_type(t.as_ref()), format)
                .with_type_modifier(wire_types::type_modifier(t.as_ref()))
        })
        .collect()
}

/// Parses statements for the extended protocol: placeholders to bind variables, then
/// the engine's parse and describe, on a blocking thread.
pub struct Parser {
    backend: Arc<Mutex<Backend>>,
}

#[async_trait]
impl QueryParser for Parser {
    type Statement = Statement;

    async fn parse_sql<C>(&self, _client: &C, sql: &str, _types: &[Option<Type>]) -> PgWireResult<Option<Statement>>
    where
        C: ClientInfo + Unpin + Send + Sync,
    {
        let fail = |f: Failure| PgWireError::UserError(Box::new(failure_info(&f, false)));
        // On the connection's own thread, as its statements run: a Parse per execution
        // (a driver's unnamed statements) costs no hand-over between threads.
        let mut backend = self.backend.lock().map_err(|_| poisoned())?;
        // What the server answers itself is not a catalog query; neither is a text that
        // names no catalog (asked without parsing the commands).
        let catalog = crate::catalog_queries::needs_translation(sql) && crate::client_commands::parse(sql).is_none();
        let translated = if catalog { backend.translate(sql).map_err(fail)? } else { None };
        let (client_text, booleans) = match translated {
            None => (std::borrow::Cow::Borrowed(sql), None),
            Some(Translated::Query { sql, booleans }) => (std::borrow::Cow::Owned(sql), Some(booleans)),
            Some(Translated::Empty { columns }) => {
                let (text, binds) = crate::sql_text::to_bind_variables(sql);
                return Ok(Some(Arc::new(Backend::describe_empty(text.into(), columns, binds))));
            }
        };
        let (text, binds) = crate::sql_text::to_bind_variables(&client_text);
        let text: Arc<str> = text.trim().trim_end_matches(';').trim().into();
        if text.is_empty() {
            return Ok(None);
        }
        let described = backend.describe(text, binds, booleans).map_err(fail)?;
        Ok(Some(Arc::new(described)))
    }

    fn get_parameter_types(&self, stmt: &Statement) -> PgWireResult<Vec<Type>> {
        Ok(stmt.bind_types.iter().map(|t| wire_types::pg_type(t.as_ref())).collect())
    }

    fn get_result_schema(&self, stmt: &Statement, column_format: Option<&Format>) -> PgWireResult<Vec<FieldInfo>> {
        Ok(fields_of(stmt, column_format).as_ref().clone())
    }
}

#[async_trait]
impl StartupHandler for Connection {
    async fn on_startup<C>(&self, client: &mut C, message: PgWireFrontendMessage) -> PgWireResult<()>
    where
        C: ClientInfo + Sink<PgWireBackendMessage> + Unpin + Send,
        C::Error: Debug,
        PgWireError: From<<C as Sink<PgWireBackendMessage>>::Error>,
    {
        match message {
            PgWireFrontendMessage::Startup(ref startup) => self.on_startup_message(client, startup).await,
            PgWireFrontendMessage::PasswordMessageFamily(message) => self.on_password_message(client, message).await,
            _ => Ok(()),
        }
    }
}

fn fatal(code: &str, message: String) -> PgWireError {
    PgWireError::UserError(Box::new(ErrorInfo::new("FATAL".into(), code.into(), message)))
}

impl Connection {
    /// The client's first message: checks the server's state and the database asked
    /// for, then logs in (trust) or starts the SCRAM exchange.
    async fn on_startup_message<C>(&self, client: &mut C, startup: &Startup) -> PgWireResult<()>
    where
        C: ClientInfo + Sink<PgWireBackendMessage> + Unpin + Send,
        C::Error: Debug,
        PgWireError: From<<C as Sink<PgWireBackendMessage>>::Error>,
    {
        protocol_negotiation(client, startup).await?;
        save_startup_parameters_to_metadata(client, startup);
        let login = LoginInfo::from_client_info(client);
        let given = login.user().unwrap_or("").to_string();
        let database = login.database().map(str::to_string);
        if self.shared.shutting_down.load(Ordering::Relaxed) {
            return Err(fatal("57P03", "the database system is shutting down".into()));
        }
        if self.shared.options.require_tls && !client.is_secure() {
            return Err(fatal("28000", "this server takes connections over TLS only (sslmode=require)".into()));
        }
        if let (Some(wanted), Some(asked)) = (&self.shared.options.database, &database)
            && !wanted.eq_ignore_ascii_case(asked)
        {
            return Err(fatal(
                "3D000",
                format!("database \"{asked}\" does not exist (this server serves \"{wanted}\")"),
            ));
        }
        if self.shared.connections.fetch_add(1, Ordering::Relaxed) >= self.shared.options.max_connections {
            self.shared.connections.fetch_sub(1, Ordering::Relaxed);
            return Err(fatal("53300", "sorry, too many clients already".into()));
        }
        self.counted.store(true, Ordering::Relaxed);
        let startup_parameters: Vec<(String, String)> =
            startup.parameters.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
        let machine = client.socket_addr().ip().to_string();
        let settings = Settings::new(&given, &machine, &startup_parameters);
        self.backend.lock().map_err(|_| poisoned())?.settings = settings;
        match self.shared.options.auth {
            Auth::Trust => self.log_in(client, &given).await,
            Auth::ScramSha256 => {
                *self.login.lock().map_err(|_| poisoned())? = Progress::AwaitingFirst;
                client.set_state(PgWireConnectionState::AuthenticationInProgress);
                let mechanisms = self.shared.authenticator.mechanisms(client.is_secure());
                client.send(PgWireBackendMessage::Authentication(Authentication::SASL(mechanisms))).await?;
                Ok(())
            }
        }
    }

    /// A message of the SCRAM exchange: the client's first (answered with the
    /// server's), then its proof (answered with the server's signature and the log-in).
    async fn on_password_message<C>(&self, client: &mut C, message: PasswordMessageFamily) -> PgWireResult<()>
    where
        C: ClientInfo + Sink<PgWireBackendMessage> + Unpin + Send,
        C::Error: Debug,
        PgWireError: From<<C as Sink<PgWireBackendMessage>>::Error>,
    {
        let given = LoginInfo::from_client_info(client).user().unwrap_or("").to_string();
        let failed = || fatal("28P01", format!("password authentication failed for user \"{given}\""));
        let progress = std::mem::replace(&mut *self.login.lock().map_err(|_| poisoned())?, Progress::Idle);
        match progress {
            Progress::AwaitingFirst => {
                let initial = message.into_sasl_initial_response()?;
                let data = initial.data.as_deref().unwrap_or_default();
                let user = self.shared.db.find_user(&given);
                let (first, waiting) = self
                    .shared
                    .authenticator
                    .first(&self.shared.db, user.as_deref(), &given, client.is_secure(), &initial.auth_method, data)
                    .map_err(|e| fatal("28000", format!("SCRAM: {e}")))?;
                *self.login.lock().map_err(|_| poisoned())? = Progress::AwaitingFinal(waiting);
                client.send(PgWireBackendMessage::Authentication(Authentication::SASLContinue(first.into()))).await?;
                Ok(())
            }
            Progress::AwaitingFinal(waiting) => {
                let response = message.into_sasl_response()?;
                let last = waiting.on_client_final_message(&response.data).map_err(|_| failed())?;
                client.feed(PgWireBackendMessage::Authentication(Authentication::SASLFinal(last.into()))).await?;
                self.log_in(client, &given).await
            }
            Progress::Idle => Err(fatal("08P01", "a password message outside authentication".into())),
        }
    }

    /// Makes the session the user `given` names (who must exist and hold CREATE
    /// SESSION), then tells the client it is in.
    async fn log_in<C>(&self, client: &mut C, given: &str) -> PgWireResult<()>
    where
        C: ClientInfo + Sink<PgWireBackendMessage> + Unpin + Send,
        C::Error: Debug,
        PgWireError: From<<C as Sink<PgWireBackendMessage>>::Error>,
    {
        let Some(user) = self.shared.db.find_user(given) else {
            return Err(fatal("28000", format!("role \"{given}\" does not exist (ORA-01017)")));
        };
        let settings = {
            let backend = self.backend.lock().map_err(|_| poisoned())?;
            backend.session.log_in_as(&user).map_err(|e| fatal("28000", sqlstate::message(&e)))?;
            backend.settings.publish_client(&backend.session);
            backend.session.set_lock_timeout(backend.settings.lock_timeout());
            backend.settings.clone()
        };
        client.set_pid_and_secret_key(self.pid(), SecretKey::I32(self.secret));
        self.shared.cancels.lock().expect("cancel registry").insert(self.pid(), (self.secret, self.canceller.clone()));

        client.feed(PgWireBackendMessage::Authentication(Authentication::Ok)).await?;
        for (name, value) in settings.reported() {
            client.feed(PgWireBackendMessage::ParameterStatus(ParameterStatus::new(name, value))).await?;
        }
        client
            .feed(PgWireBackendMessage::BackendKeyData(BackendKeyData::new(self.pid(), SecretKey::I32(self.secret))))
            .await?;
        client.send(PgWireBackendMessage::ReadyForQuery(ReadyForQuery::new(TransactionStatus::Idle))).await?;
        client.set_state(PgWireConnectionState::ReadyForQuery);
        Ok(())
    }
}

#[async_trait]
impl SimpleQueryHandler for Connection {
    async fn do_query<C>(&self, client: &mut C, query: &str) -> PgWireResult<Vec<Response>>
    where
        C: ClientInfo + ClientPortalStore + Sink<PgWireBackendMessage> + Unpin + Send + Sync,
        C::PortalStore: PortalStore,
        C::Error: Debug,
        PgWireError: From<<C as Sink<PgWireBackendMessage>>::Error>,
    {
        let mut responses = Vec::new();
        for statement in crate::sql_text::split_statements(query) {
            let sql = statement.to_string();
            let command = crate::client_commands::parse(&sql);
            if let Some(crate::client_commands::ClientCommand::Deallocate(Some(name))) = &command {
                client.portal_store().rm_statement(name);
            }
            let (outcome, timed_out) = self.call(move |backend| backend.run_text(&sql, command)).await?;
            match outcome {
                Ok(reply) => {
                    send_notices(client, &reply).await?;
                    let copy_in = reply.effect == Effect::CopyIn;
                    responses.push(response(reply, None)?);
                    if copy_in {
                        // The rows come next; what follows a COPY in the text is not run.
                        break;
                    }
                }
                Err(failure) => {
                    // The rest of the text is not run, as in PostgreSQL.
                    responses.push(Response::Error(Box::new(failure_info(&failure, timed_out))));
                    break;
                }
            }
        }
        if responses.is_empty() {
            responses.push(Response::EmptyQuery);
        }
        Ok(responses)
    }
}

#[async_trait]
impl ExtendedQueryHandler for Connection {
    type Statement = Statement;
    type QueryParser = Parser;

    fn query_parser(&self) -> Arc<Parser> {
        self.parser.clone()
    }

    /// Executes a portal as the protocol's default does, but queues the answer rather
    /// than sending it: it goes out at the Sync with ReadyForQuery, in one write. A
    /// query's rows are handed over `max_rows` at a time (PortalSuspended between); when
    /// the first Execute asks for them all (`max_rows` 0), they go from the query's
    /// answer to the client directly, the portal left finished as a fetch of them all
    /// leaves it, without the copy into a batch that a fetch makes.
    async fn on_execute<C>(&self, client: &mut C, message: Execute) -> PgWireResult<()>
    where
        C: ClientInfo + ClientPortalStore + Sink<PgWireBackendMessage> + Unpin + Send + Sync,
        C::PortalStore: PortalStore<Statement = Self::Statement>,
        C::Error: Debug,
        PgWireError: From<<C as Sink<PgWireBackendMessage>>::Error>,
    {
        if !matches!(client.state(), PgWireConnectionState::ReadyForQuery) {
            return Err(PgWireError::NotReadyForQuery);
        }
        let mut status = client.transaction_status();
        client.set_state(PgWireConnectionState::QueryInProgress);
        let portal_name = message.name.as_deref().unwrap_or(DEFAULT_NAME);
        let max_rows = message.max_rows as usize;
        let portal = match client.portal_store().get_portal(portal_name) {
            Some(Entry::Value(portal)) => portal,
            Some(Entry::Empty) => {
                client.feed(PgWireBackendMessage::EmptyQueryResponse(EmptyQueryResponse::new())).await?;
                client.set_state(PgWireConnectionState::ReadyForQuery);
                return Ok(());
            }
            None => return Err(PgWireError::PortalNotFound(portal_name.to_owned())),
        };
        let initial = matches!(*portal.state().lock().await, PortalExecutionState::Initial);
        // The rows to send now, and whether the portal stays suspended after them.
        let mut answer: Option<(QueryResponse, bool)> = None;
        let mut fetch = !initial;
        if initial {
            match ExtendedQueryHandler::do_query(self, client, &portal, max_rows).await? {
                Response::Query(query) if max_rows == 0 => {
                    *portal.state().lock().await = PortalExecutionState::Finished;
                    answer = Some((query, false));
                }
                Response::Query(query) => {
                    portal.start(query).await;
                    fetch = true;
                }
                Response::EmptyQuery => {
                    client.feed(PgWireBackendMessage::EmptyQueryResponse(EmptyQueryResponse::new())).await?;
                }
                Response::Execution(tag) => {
                    client.feed(PgWireBackendMessage::CommandComplete(tag.into())).await?;
                }
                Response::TransactionStart(tag) => {
                    client.feed(PgWireBackendMessage::CommandComplete(tag.into())).await?;
                    status = status.to_in_transaction_state();
                }
                Response::TransactionEnd(tag) => {
                    client.feed(PgWireBackendMessage::CommandComplete(tag.into())).await?;
                    status = status.to_idle_state();
                    client.portal_store().rm_portal(DEFAULT_NAME);
                }
                Response::Error(e) => {
                    client.feed(PgWireBackendMessage::ErrorResponse((*e).into())).await?;
                    status = status.to_error_state();
                }
                Response::CopyIn(copy) => {
                    client.set_state(PgWireConnectionState::CopyInProgress(true));
                    pgwire::api::copy::send_copy_in_response(client, copy).await?;
                }
                Response::CopyOut(copy) => pgwire::api::copy::send_copy_out_response(client, copy).await?,
                Response::CopyBoth(copy) => {
                    client.set_state(PgWireConnectionState::CopyInProgress(true));
                    pgwire::api::copy::send_copy_both_response(client, copy).await?;
                }
            }
        }
        if fetch {
            let fetched = portal.fetch(max_rows).await?;
            answer = Some((fetched.response, fetched.suspended));
        }
        if let Some((mut response, suspended)) = answer {
            let tag = std::mem::take(&mut response.command_tag);
            let mut rows = 0;
            while let Some(row) = response.data_rows().next().await {
                client.feed(PgWireBackendMessage::DataRow(row?)).await?;
                rows += 1;
            }
            if suspended {
                client.feed(PgWireBackendMessage::PortalSuspended(PortalSuspended::new())).await?;
            } else {
                client
                    .feed(PgWireBackendMessage::CommandComplete(CommandComplete::new(counted_tag(&tag, rows as u64))))
                    .await?;
            }
        }
        if !matches!(client.state(), PgWireConnectionState::CopyInProgress(_)) {
            client.set_state(PgWireConnectionState::ReadyForQuery);
            client.set_transaction_status(status);
        }
        Ok(())
    }

    /// Parses a statement as the protocol's default does, but queues ParseComplete rather
    /// than sending it at once: like every answer of the extended protocol it goes out
    /// at the Sync (or a Flush), as PostgreSQL sends them.
    async fn on_parse<C>(&self, client: &mut C, message: Parse) -> PgWireResult<()>
    where
        C: ClientInfo + ClientPortalStore + Sink<PgWireBackendMessage> + Unpin + Send + Sync,
        C::PortalStore: PortalStore<Statement = Self::Statement>,
        C::Error: Debug,
        PgWireError: From<<C as Sink<PgWireBackendMessage>>::Error>,
    {
        match StoredStatement::parse(client, &message, self.query_parser()).await? {
            Some(statement) => client.portal_store().put_statement(Arc::new(statement)),
            None => client.portal_store().put_empty_statement(message.name.as_deref().unwrap_or(DEFAULT_NAME)),
        }
        client.feed(PgWireBackendMessage::ParseComplete(ParseComplete::new())).await?;
        Ok(())
    }

    /// Describes a statement or a portal as the protocol's default does, but queues the
    /// answer (ParameterDescription, RowDescription or NoData) for the Sync: a client
    /// that sends Bind, Describe, Execute and Sync together gets one write back.
    async fn on_describe<C>(&self, client: &mut C, message: Describe) -> PgWireResult<()>
    where
        C: ClientInfo + ClientPortalStore + Sink<PgWireBackendMessage> + Unpin + Send + Sync,
        C::PortalStore: PortalStore<Statement = Self::Statement>,
        C::Error: Debug,
        PgWireError: From<<C as Sink<PgWireBackendMessage>>::Error>,
    {
        let name = message.name.as_deref().unwrap_or(DEFAULT_NAME);
        let (parameters, fields) = match message.target_type {
            b'S' => match client.portal_store().get_statement(name) {
                Some(Entry::Value(statement)) => {
                    let described = self.do_describe_statement(client, &statement).await?;
                    (Some(described.parameters), Arc::new(described.fields))
                }
                Some(Entry::Empty) => (Some(Vec::new()), Arc::default()),
                None => return Err(PgWireError::StatementNotFound(name.to_owned())),
            },
            // A portal's fields as its statement keeps them for its format (see
            // `fields_of`): no copy of them at each execution's Describe.
            b'P' => match client.portal_store().get_portal(name) {
                Some(Entry::Value(portal)) => {
                    (None, fields_of(&portal.statement.statement, Some(&portal.result_column_format)))
                }
                Some(Entry::Empty) => (None, Arc::default()),
                None => return Err(PgWireError::PortalNotFound(name.to_owned())),
            },
            other => return Err(PgWireError::InvalidTargetType(other)),
        };
        if let Some(parameters) = parameters {
            let oids = parameters.iter().map(|t| t.oid()).collect();
            client.feed(PgWireBackendMessage::ParameterDescription(ParameterDescription::new(oids))).await?;
        }
        let answer = if fields.is_empty() {
            PgWireBackendMessage::NoData(NoData::new())
        } else {
            PgWireBackendMessage::RowDescription(RowDescription::new(fields.iter().map(Into::into).collect()))
        };
        client.feed(answer).await?;
        Ok(())
    }

    /// Closes a statement or a portal as the protocol's default does, the CloseComplete
    /// queued for the Sync.
    async fn on_close<C>(&self, client: &mut C, message: Close) -> PgWireResult<()>
    where
        C: ClientInfo + ClientPortalStore + Sink<PgWireBackendMessage> + Unpin + Send + Sync,
        C::PortalStore: PortalStore<Statement = Self::Statement>,
        C::Error: Debug,
        PgWireError: From<<C as Sink<PgWireBackendMessage>>::Error>,
    {
        let name = message.name.as_deref().unwrap_or(DEFAULT_NAME);
        match message.target_type {
            b'S' => client.portal_store().rm_statement(name),
            b'P' => client.portal_store().rm_portal(name),
            _ => {}
        }
        client.feed(PgWireBackendMessage::CloseComplete(CloseComplete::new())).await?;
        Ok(())
    }

    /// Binds a portal, as the protocol's default does, but queues BindComplete rather
    /// than sending it at once: it goes out with the execution's answer, one write (and
    /// one wake-up of the client) fewer a statement.
    async fn on_bind<C>(&self, client: &mut C, message: Bind) -> PgWireResult<()>
    where
        C: ClientInfo + ClientPortalStore + Sink<PgWireBackendMessage> + Unpin + Send + Sync,
        C::PortalStore: PortalStore<Statement = Self::Statement>,
        C::Error: Debug,
        PgWireError: From<<C as Sink<PgWireBackendMessage>>::Error>,
    {
        let statement_name = message.statement_name.as_deref().unwrap_or(DEFAULT_NAME);
        let portal_name = message.portal_name.as_deref().unwrap_or(DEFAULT_NAME);
        match client.portal_store().get_statement(statement_name) {
            Some(Entry::Value(statement)) => {
                let portal = Portal::try_new(&message, statement)?;
                client.portal_store().put_portal(Arc::new(portal));
            }
            Some(Entry::Empty) if message.parameters.is_empty() => client.portal_store().put_empty_portal(portal_name),
            Some(Entry::Empty) => {
                return Err(sqlstate::user_error(
                    "08P01",
                    format!(
                        "bind supplies {} parameters, but the empty statement takes none",
                        message.parameters.len()
                    ),
                ));
            }
            None => return Err(PgWireError::StatementNotFound(statement_name.to_owned())),
        }
        client.feed(PgWireBackendMessage::BindComplete(BindComplete::new())).await?;
        Ok(())
    }

    async fn do_query<C>(&self, client: &mut C, portal: &Portal<Statement>, _max_rows: usize) -> PgWireResult<Response>
    where
        C: ClientInfo + ClientPortalStore + Sink<PgWireBackendMessage> + Unpin + Send + Sync,
        C::PortalStore: PortalStore<Statement = Self::Statement>,
        C::Error: Debug,
        PgWireError: From<<C as Sink<PgWireBackendMessage>>::Error>,
    {
        let described = portal.statement.statement.clone();
        let client_types = &portal.statement.parameter_types;
        let mut binds: Vec<Value> = Vec::with_capacity(portal.parameters.len());
        for (i, bytes) in portal.parameters.iter().enumerate() {
            let t = client_types
                .get(i)
                .cloned()
                .flatten()
                .filter(|t| *t != Type::UNKNOWN)
                .or_else(|| described.bind_types.get(i).map(|t| wire_types::pg_type(t.as_ref())));
            let value =
                wire_types::decode_parameter(bytes.as_deref(), t.as_ref(), portal.parameter_format.is_binary(i))
                    .map_err(|m| sqlstate::user_error("22P02", format!("parameter ${}: {m}", i + 1)))?;
            binds.push(value);
        }
        let fields = fields_of(&described, Some(&portal.result_column_format));
        let run = described.clone();
        let (outcome, timed_out) = self.call(move |backend| backend.run(&run, &binds)).await?;
        match outcome {
            Ok(reply) => {
                send_notices(client, &reply).await?;
                let fields = described.columns.is_some().then_some(fields);
                response(reply, fields)
            }
            Err(failure) => Err(PgWireError::UserError(Box::new(failure_info(&failure, timed_out)))),
        }
    }
}

#[async_trait]
impl CopyHandler for Connection {
    async fn on_copy_data<C>(&self, _client: &mut C, copy_data: CopyData) -> PgWireResult<()>
    where
        C: ClientInfo + Sink<PgWireBackendMessage> + Unpin + Send + Sync,
        C::Error: Debug,
        PgWireError: From<<C as Sink<PgWireBackendMessage>>::Error>,
    {
        let (outcome, _) = self.call(move |backend| backend.copy_data(&copy_data.data)).await?;
        outcome.map_err(|f| PgWireError::UserError(Box::new(failure_info(&f, false))))
    }

    async fn on_copy_done<C>(&self, client: &mut C, _done: CopyDone) -> PgWireResult<()>
    where
        C: ClientInfo + Sink<PgWireBackendMessage> + Unpin + Send + Sync,
        C::Error: Debug,
        PgWireError: From<<C as Sink<PgWireBackendMessage>>::Error>,
    {
        let (outcome, timed_out) = self.call(|backend| backend.finish_copy()).await?;
        match outcome {
            Ok(reply) => {
                send_notices(client, &reply).await?;
                let tag = Tag::new(&reply.tag);
                client.send(PgWireBackendMessage::CommandComplete(tag.into())).await?;
                Ok(())
            }
            Err(failure) => Err(PgWireError::UserError(Box::new(failure_info(&failure, timed_out)))),
        }
    }

    async fn on_copy_fail<C>(&self, _client: &mut C, fail: CopyFail) -> PgWireError
    where
        C: ClientInfo + Sink<PgWireBackendMessage> + Unpin + Send + Sync,
        C::Error: Debug,
        PgWireError: From<<C as Sink<PgWireBackendMessage>>::Error>,
    {
        if let Err(e) = self.call(|backend| backend.fail_copy()).await {
            return e;
        }
        sqlstate::user_error("57014", format!("COPY from stdin failed: {}", fail.message))
    }
}

/// The handlers of one connection, as pgwire asks for them.
pub struct Handlers(pub Arc<Connection>);

impl PgWireServerHandlers for Handlers {
    fn simple_query_handler(&self) -> Arc<impl SimpleQueryHandler> {
        self.0.clone()
    }

    fn extended_query_handler(&self) -> Arc<impl ExtendedQueryHandler> {
        self.0.clone()
    }

    fn startup_handler(&self) -> Arc<impl StartupHandler> {
        self.0.clone()
    }

    fn copy_handler(&self) -> Arc<impl CopyHandler> {
        self.0.clone()
    }

    fn cancel_handler(&self) -> Arc<impl pgwire::api::cancel::CancelHandler> {
        Arc::new(crate::CancelRequests(self.0.shared.clone()))
    }
}
