"""Settings, driven by the environment. With nothing set you get the embedded default:
SQLite under the data directory, an in-memory channel layer, one process."""
import os
import secrets
import sys
from pathlib import Path

import dj_database_url

BASE_DIR = Path(__file__).resolve().parent.parent
VERSION = "0.1.0"


def _env_list(name: str, default: str) -> list[str]:
    return [item.strip() for item in os.environ.get(name, default).split(",") if item.strip()]


DATA_DIR = Path(os.environ.get("AGENTSERVER_DATA_DIR", BASE_DIR / ".data")).resolve()
DATA_DIR.mkdir(parents=True, exist_ok=True)


# Durable server state another host needs (snapshot stores, server-made worktrees, users' HOMEs): a directory
# every host mounts at the same path. Per-host caches (the sandbox's /etc copies) stay in DATA_DIR.
SHARED_DIR = Path(os.environ.get("AGENTSERVER_SHARED_DIR") or DATA_DIR).resolve()
SHARED_DIR.mkdir(parents=True, exist_ok=True)
DATABASE_URL = os.environ.get("DATABASE_URL") or f"sqlite:///{DATA_DIR / 'db.sqlite3'}"
# The scaled mode (PostgreSQL, any number of workers and hosts) shares no data dir: keys each host made on
# its own would disagree (signed cookies, the credential key derived from SECRET_KEY), so they must be given.
SCALED = DATABASE_URL.startswith(("postgres://", "postgresql://", "pgsql://"))


def _secret_key() -> str:
    if os.environ.get("SECRET_KEY"):
        return os.environ["SECRET_KEY"]
    if SCALED:
        from django.core.exceptions import ImproperlyConfigured

        raise ImproperlyConfigured(
            "SECRET_KEY must be set in the environment when DATABASE_URL is PostgreSQL (the scaled mode): every "
            "worker on every host must share one key, and a key generated in one host's data dir would not. "
            "Set the same SECRET_KEY (and, recommended, AGENTSERVER_FERNET_KEYS) on every host.")
    # A fresh machine gets a random key that survives restarts, so sessions and signed values stay valid.
    key_file = DATA_DIR / "secret_key"
    if not key_file.exists():
        # Workers starting together must agree on one key: write aside, then link (atomic, first one wins).
        draft = DATA_DIR / f"secret_key.{os.getpid()}"
        draft.write_text(secrets.token_urlsafe(50))
        draft.chmod(0o600)
        try:
            os.link(draft, key_file)
        except FileExistsError:
            pass
        finally:
            draft.unlink()
    return key_file.read_text().strip()


SECRET_KEY = _secret_key()
DEBUG = os.environ.get("AGENTSERVER_DEBUG", "") == "1"
ALLOWED_HOSTS = _env_list("AGENTSERVER_ALLOWED_HOSTS", "127.0.0.1,localhost,[::1]")

INSTALLED_APPS = [
    # daphne only for `manage.py runserver` (a development server that speaks ASGI, so SSE and WebSocket
    # routes work there too); workers are served by server.serve (uvicorn: see its docstring), and importing
    # daphne (Twisted, autobahn) was a fifth of a worker's start.
    *(["daphne"] if sys.argv[1:2] == ["runserver"] else []),
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "corsheaders",
    "rest_framework",
    "drf_spectacular",
    "channels",
    "agentserver",
    "audit_app",
    "auth_app",
    "policy_app",
    "projects_app",
    "sessions_app",
    "providers_app",
    "usage_app",
    "pty_app",
    "tui_app",
    "web_app",
]

MIDDLEWARE = [
    "corsheaders.middleware.CorsMiddleware",
    "agentserver.http.middleware.BodySizeLimitMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "web_app.middleware.SecureCookiesOverTls",
    "web_app.middleware.TrustedDeviceCookie",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "audit_app.middleware.RequestActorMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
]
# The JSON API's chain when a request carries no session cookie (agentserver/http/handler.py): tokens need
# no sessions, CSRF or messages. CommonMiddleware checks the Host (ALLOWED_HOSTS) and sets Content-Length.
API_MIDDLEWARE = [
    "corsheaders.middleware.CorsMiddleware",
    "agentserver.http.middleware.BodySizeLimitMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "django.middleware.common.CommonMiddleware",
]

ROOT_URLCONF = "server.urls"
APPEND_SLASH = False
ASGI_APPLICATION = "server.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

DATABASES = {"default": dj_database_url.parse(DATABASE_URL, conn_max_age=0)}
# Requests run on a fixed pool of threads (agentserver/http/handler.py): that many at once, more fall back
# to a thread of their own. Each pool thread keeps its database connection (SQLite) or borrows one from the
# psycopg pool per request (PostgreSQL).
HTTP_THREADS = int(os.environ.get("AGENTSERVER_HTTP_THREADS", "32"))
# ...of which this many do Python work at once; the others wait for a slot (see http_handler.py).
# SQLite answers from local memory, so one at a time is fastest; PostgreSQL round trips leave the GIL free.
HTTP_RUNNING = int(os.environ.get("AGENTSERVER_HTTP_RUNNING", "")
                   or (1 if DATABASE_URL.startswith("sqlite") else 2))
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # Django's backend, with the process's writers taking turns on a lock rather than on SQLite's sleeps.
    DATABASES["default"]["ENGINE"] = "agentserver.db.sqlite"
    # Opening a SQLite connection (and its PRAGMAs) cost more than the queries of a typical request.
    DATABASES["default"]["CONN_MAX_AGE"] = None
    DATABASES["default"]["CONN_HEALTH_CHECKS"] = True
    DATABASES["default"]["OPTIONS"] = {
        # WAL lets readers run beside the writer; IMMEDIATE avoids upgrade deadlocks between threads.
        "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
        "transaction_mode": "IMMEDIATE",
        "timeout": 20,
    }
else:
    # A pool: connections outlive requests, and their prepared statements with them. Server-side binding
    # and prepared statements: with Django's defaults psycopg quoted every parameter into the SQL text in
    # Python and PostgreSQL parsed and planned every query anew; here a query a connection has run twice is
    # prepared (Django turns preparing off for external poolers such as pgbouncer; this pool is psycopg's).
    # GET /session at 32 clients: about two thirds less CPU in PostgreSQL. Restart the workers after a
    # migration, as any deploy does: a prepared statement does not follow a changed table.
    DATABASES["default"]["OPTIONS"] = {
        "pool": {"min_size": 1, "max_size": int(os.environ.get("AGENTSERVER_DB_POOL", "16"))},
        "server_side_binding": True,
        "prepare_threshold": 2,
        # No JIT compilation: the server's queries are short (a row by key, a few thousand day totals summed),
        # and compiling an aggregate's expressions cost more than it saved: 0.3-0.5 s of a usage query over
        # everyone's month on the development machine (docs/usage.md, "Benchmark").
        "options": "-c jit=off",
    }
if os.environ.get("AGENTSERVER_TEST_DB_NAME"):
    DATABASES["default"]["TEST"] = {"NAME": os.environ["AGENTSERVER_TEST_DB_NAME"]}

REDIS_URL = os.environ.get("REDIS_URL", "")
# A stopping worker (SIGTERM) lets its running turns finish this long, then hands their sessions over.
GRACE_SECONDS = float(os.environ.get("AGENTSERVER_GRACE_SECONDS", "60"))
# A worker whose Redis heartbeat is this old is dead (agentserver/workers/liveness.py): its terminals are removed.
WORKER_TTL_SECONDS = float(os.environ.get("AGENTSERVER_WORKER_TTL_SECONDS", "10"))
# Names the Redis event channel (agentserver/workers/deployment.py); unset: the identity row of the database.
DEPLOYMENT = os.environ.get("AGENTSERVER_DEPLOYMENT", "").strip()
if REDIS_URL:
    CHANNEL_LAYERS = {
        "default": {
            "BACKEND": "channels_redis.pubsub.RedisPubSubChannelLayer",
            "CONFIG": {"hosts": [REDIS_URL]},
        }
    }
else:
    CHANNEL_LAYERS = {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}

# Every form that sets a password runs these (the account page, the admin's user pages, createsuperuser).
# A fair share of the server: how many turns one person may run at once over every worker and host (0: no
# cap); more wait in line, in order (sessions_app/runtime/turn_slots.py).
MAX_TURNS_PER_PERSON = int(os.environ.get("AGENTSERVER_MAX_TURNS_PER_PERSON", "0"))
PASSWORD_MIN_LENGTH = int(os.environ.get("AGENTSERVER_PASSWORD_MIN_LENGTH", "12"))
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator",
     "OPTIONS": {"min_length": PASSWORD_MIN_LENGTH}},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = False
USE_TZ = True
# Usage accounting (docs/usage.md): the zone whose calendar days, weeks and months the usage reports group by
# and budgets reset on; checked at start-up (usage_app.apps).
USAGE_TIME_ZONE = os.environ.get("AGENTSERVER_USAGE_TIME_ZONE", "").strip() or "UTC"
# The most one session may spend on model calls, in USD (0: no cap), checked before each call.
USAGE_SESSION_CAP_USD = float(os.environ.get("AGENTSERVER_USAGE_SESSION_CAP_USD", "") or 0)
STATIC_URL = "static/"
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# Request bodies beyond this many bytes get 413.
DATA_UPLOAD_MAX_MEMORY_SIZE = int(os.environ.get("AGENTSERVER_MAX_BODY_BYTES", str(10 * 1024 * 1024)))

CORS_ALLOWED_ORIGINS = _env_list("AGENTSERVER_CORS_ORIGINS", "")
# x-opencode-ticket: opencode's web app asks for a PTY ticket with it (its terminal, from another origin).
CORS_ALLOW_HEADERS = ["authorization", "content-type", "x-opencode-directory", "x-opencode-workspace",
                      "x-opencode-ticket", "last-event-id", "x-csrftoken"]
CORS_EXPOSE_HEADERS = ["Link", "X-Next-Cursor"]
CORS_PREFLIGHT_MAX_AGE = 86400

CSRF_TRUSTED_ORIGINS = CORS_ALLOWED_ORIGINS

# Roots given to the first admin created by `manage.py bootstrap`.
DEFAULT_ROOTS = _env_list("AGENTSERVER_DEFAULT_ROOTS", "")
PUBLIC_URL = os.environ.get("AGENTSERVER_PUBLIC_URL", "").rstrip("/")
# Proxies whose X-Forwarded-For and X-Forwarded-Proto a worker believes (server/serve.py hands them to uvicorn):
# addresses or networks, "*" for any. None by default: a forged X-Forwarded-For would otherwise give a client
# a fresh address for every guess (web_app/throttle.py), and a forged X-Forwarded-Proto a "secure" request.
TRUSTED_PROXIES = _env_list("AGENTSERVER_TRUSTED_PROXIES", "")
# Behind TLS (an https public URL), every answer over TLS tells browsers to come back only over TLS.
SECURE_HSTS_SECONDS = (int(os.environ.get("AGENTSERVER_HSTS_SECONDS", "31536000"))
                       if PUBLIC_URL.startswith("https://") else 0)

# opencode's web app, served at / to signed-in browsers (web_app/): by default the copy that
# `manage.py install_web_app` (run by the set-up) makes from the pinned opencode-ai npm binary; or
# AGENTSERVER_WEB_APP: another directory, or the URL of a hosted copy to relay.
OPENCODE_NPM_VERSION = "1.18.33"
WEB_APP_VERSION = "1.18.32"  # the app embedded in opencode-ai 1.18.33
WEB_APP_DIR = BASE_DIR / ".web-app" / WEB_APP_VERSION
WEB_APP = os.environ.get("AGENTSERVER_WEB_APP", "") or str(WEB_APP_DIR)
# Browser sign-in (web_app/): the Django session cookie, accepted by the API only from this server's own
# pages (auth_app/authentication.py). Every password check is throttled (web_app/throttle.py): per browser
# that signed in as that person before; otherwise per username and address, per address, and per username
# from every new browser together.
LOGIN_URL = "/signin"
SESSION_COOKIE_SAMESITE = "Lax"  # Strict would drop the cookie on the way back from a single sign-on
SESSION_COOKIE_SECURE = CSRF_COOKIE_SECURE = PUBLIC_URL.startswith("https://")
SIGNIN_FAILURES_PER_USER = int(os.environ.get("AGENTSERVER_SIGNIN_FAILURES_PER_USER", "5"))
SIGNIN_FAILURES_PER_ADDRESS = int(os.environ.get("AGENTSERVER_SIGNIN_FAILURES_PER_ADDRESS", "20"))
SIGNIN_FAILURES_PER_USER_NEW_BROWSERS = int(os.environ.get("AGENTSERVER_SIGNIN_FAILURES_PER_USER_NEW_BROWSERS",
                                                           "50"))
SIGNIN_WINDOW_SECONDS = int(os.environ.get("AGENTSERVER_SIGNIN_WINDOW_SECONDS", "900"))
AUTHENTICATION_BACKENDS = ["web_app.throttle.PasswordBackend"]
# Optional single sign-on through OpenID Connect (mozilla-django-oidc; web_app/oidc.py), on when an issuer is set.
OIDC_ISSUER = os.environ.get("AGENTSERVER_OIDC_ISSUER", "").rstrip("/")
if OIDC_ISSUER:
    AUTHENTICATION_BACKENDS.append("web_app.oidc.IdentityBackend")
    OIDC_RP_CLIENT_ID = os.environ.get("AGENTSERVER_OIDC_CLIENT_ID", "")
    OIDC_RP_CLIENT_SECRET = os.environ.get("AGENTSERVER_OIDC_CLIENT_SECRET", "")
    OIDC_RP_SIGN_ALGO = os.environ.get("AGENTSERVER_OIDC_SIGN_ALGO", "RS256")
    OIDC_RP_SCOPES = os.environ.get("AGENTSERVER_OIDC_SCOPES", "openid email profile")
    OIDC_PROVIDER_NAME = os.environ.get("AGENTSERVER_OIDC_NAME", "single sign-on")
    OIDC_CREATE_USER = os.environ.get("AGENTSERVER_OIDC_CREATE_USERS", "") in ("1", "on", "true", "yes")
    OIDC_USERNAME_CLAIM = os.environ.get("AGENTSERVER_OIDC_USERNAME_CLAIM", "preferred_username")
    OIDC_USE_PKCE = True
    LOGIN_REDIRECT_URL = "/"
    LOGIN_REDIRECT_URL_FAILURE = "/signin?sso=failed"

# Credential encryption keys (Fernet), newest first; unset → derived from SECRET_KEY (see auth_app/crypto.py).
FERNET_KEYS = _env_list("AGENTSERVER_FERNET_KEYS", "")
# The sandbox of every process run for a user (agentserver/sandbox/launcher.py; README "Security model").
SANDBOX_MODE = os.environ.get("AGENTSERVER_SANDBOX", "on").strip().lower()  # on (bubblewrap) | off
SANDBOX_BWRAP = os.environ.get("AGENTSERVER_SANDBOX_BWRAP", "bwrap")
SANDBOX_NETWORK = os.environ.get("AGENTSERVER_SANDBOX_NETWORK", "outbound").strip().lower()  # outbound|none|host
# Offline programs on a user's files (git) run in a long-lived sandbox per user (agentserver/sandbox/resident.py).
SANDBOX_RESIDENT = os.environ.get("AGENTSERVER_SANDBOX_RESIDENT", "on").strip().lower() not in ("off", "0", "no")
SANDBOX_EXPOSE = _env_list("AGENTSERVER_SANDBOX_EXPOSE", "")  # read-only in every sandbox (shared toolchains)
SANDBOX_UID_BASE = int(os.environ.get("AGENTSERVER_SANDBOX_UID_BASE", "200000"))  # uid = base + user id (as root)
SANDBOX_LIMITS = {  # per process; 0 = unlimited. processes counts every process of the user's uid (root only)
    "cpu_seconds": int(os.environ.get("AGENTSERVER_SANDBOX_CPU_SECONDS", "7200")),
    "memory_mb": int(os.environ.get("AGENTSERVER_SANDBOX_MEMORY_MB", "8192")),
    "file_mb": int(os.environ.get("AGENTSERVER_SANDBOX_FILE_MB", "8192")),
    "open_files": int(os.environ.get("AGENTSERVER_SANDBOX_OPEN_FILES", "4096")),
    "processes": int(os.environ.get("AGENTSERVER_SANDBOX_PROCESSES", "512")),
}
SSE_HEARTBEAT_SECONDS = float(os.environ.get("AGENTSERVER_SSE_HEARTBEAT_SECONDS", "10"))
EVENT_LOG_RETENTION = int(os.environ.get("AGENTSERVER_EVENT_LOG_RETENTION", "100000"))
SSE_QUEUE_SIZE = int(os.environ.get("AGENTSERVER_SSE_QUEUE_SIZE", "10000"))  # per stream; overflow → resync
# How long a worker holds other events back for one with a smaller id before reading it from the event log
# (agentserver/events/sequencer.py): streams get every logged event in id order.
EVENT_GAP_WAIT_MS = int(os.environ.get("AGENTSERVER_EVENT_GAP_WAIT_MS", "200"))
SSE_MAX_STREAMS_PER_USER = int(os.environ.get("AGENTSERVER_SSE_MAX_STREAMS_PER_USER", "200"))
# The operator's SearXNG-compatible search endpoint for the websearch tool (any address, loopback included).
WEBSEARCH_URL = os.environ.get("AGENTSERVER_WEBSEARCH_URL", "")
# How long GET /tui/control/next waits for a request before answering 204 (each wait holds a worker thread).
TUI_CONTROL_WAIT_SECONDS = float(os.environ.get("AGENTSERVER_TUI_CONTROL_WAIT_SECONDS", "25"))
# The longest a request waits for an MCP server to connect, whatever its own `timeout` says (up to ten minutes):
# one still silent by then has failed (a local command that never speaks MCP held GET /mcp for its timeout).
MCP_CONNECT_WAIT_CAP_SECONDS = float(os.environ.get("AGENTSERVER_MCP_CONNECT_WAIT_CAP_SECONDS", "20"))

# Language servers: how long an edit waits for the file's diagnostics, and when an unused server is stopped.
LSP_DIAGNOSTICS_WAIT_SECONDS = float(os.environ.get("AGENTSERVER_LSP_DIAGNOSTICS_WAIT_SECONDS", "10"))
# A server often publishes twice for one change (syntax, then semantics): diagnostics count as settled once
# it has kept quiet this long (opencode's 150 ms). A loaded host can take longer between the two.
LSP_DIAGNOSTICS_QUIET_SECONDS = float(os.environ.get("AGENTSERVER_LSP_DIAGNOSTICS_QUIET_SECONDS", "0.15"))
LSP_IDLE_SECONDS = float(os.environ.get("AGENTSERVER_LSP_IDLE_SECONDS", "600"))
# Servers one worker keeps at most (a language server takes hundreds of MB); the least recently used goes first.
LSP_MAX_SERVERS = int(os.environ.get("AGENTSERVER_LSP_MAX_SERVERS", "8"))

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "auth_app.authentication.ApiTokenAuthentication",
        "auth_app.authentication.JsonOnlySessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_PARSER_CLASSES": ["agentserver.http.parsers.LenientJSONParser"],
    "DEFAULT_RENDERER_CLASSES": ["agentserver.http.renderers.FastJSONRenderer"],
    "DEFAULT_CONTENT_NEGOTIATION_CLASS": "agentserver.http.renderers.AlwaysJson",
    "EXCEPTION_HANDLER": "agentserver.errors.exception_handler",
    "DEFAULT_SCHEMA_CLASS": "agentserver.http.schema.OperationIdAutoSchema",
    "UNAUTHENTICATED_USER": None,
    # `format` is an ordinary input (vcs.diff's json | patch); as DRF's renderer override, ?format=x was a 500.
    "URL_FORMAT_OVERRIDE": None,
}

SPECTACULAR_SETTINGS = {
    "TITLE": "agentserver",
    "DESCRIPTION": "Multi-user coding-agent server, wire-compatible with opencode's server API.",
    "VERSION": VERSION,
    "OAS_VERSION": "3.1.0",
    "SERVE_INCLUDE_SCHEMA": False,
    # The error shape every error answer refers to, and the routes spectacular cannot see (the event streams).
    "POSTPROCESSING_HOOKS": ["agentserver.http.schema.add_error_shape_and_plain_routes",
                             "agentserver.http.schema.state_opencode_answers"],
}

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": os.environ.get("AGENTSERVER_LOG_LEVEL", "WARNING")},
}
# Every committed audit record as one JSON line (docs/audit.md), for a SIEM: to this file when set (any other
# handler can be attached to the `agentserver.audit` logger instead).
AUDIT_LOG_FILE = os.environ.get("AGENTSERVER_AUDIT_LOG_FILE", "")
if AUDIT_LOG_FILE:
    LOGGING["formatters"] = {"audit_line": {"format": "%(message)s"}}
    LOGGING["handlers"]["audit_file"] = {"class": "logging.handlers.WatchedFileHandler",
                                         "filename": AUDIT_LOG_FILE, "formatter": "audit_line"}
    LOGGING["loggers"] = {"agentserver.audit": {"handlers": ["audit_file"], "level": "INFO",
                                                "propagate": False}}
