"""deploy/ as shipped: nginx accepts the site file verbatim, and every variable the env file and the unit name is
one the server, uvicorn or the unit itself reads."""
import re
import shutil
import subprocess

from tests.conftest import ROOT

DEPLOY = ROOT / "deploy"
UNIT_VARIABLES = {"AGENTSERVER_LISTEN_HOST", "AGENTSERVER_LISTEN_PORT", "AGENTSERVER_WORKERS"}


def test_nginx_accepts_the_site_file_as_shipped(tmp_path):
    conf = tmp_path / "nginx.conf"
    conf.write_text(f"""pid {tmp_path}/nginx.pid;
error_log {tmp_path}/error.log;
events {{}}
http {{
    client_body_temp_path {tmp_path}; proxy_temp_path {tmp_path}; fastcgi_temp_path {tmp_path};
    uwsgi_temp_path {tmp_path}; scgi_temp_path {tmp_path};
    include {DEPLOY / "nginx-agentserver.conf"};
}}
""")
    nginx = shutil.which("nginx") or "/usr/sbin/nginx"
    checked = subprocess.run([nginx, "-t", "-p", str(tmp_path), "-e", str(tmp_path / "error.log"), "-c", str(conf)],
                             check=False, capture_output=True, text=True)
    assert checked.returncode == 0, checked.stderr
    site = (DEPLOY / "nginx-agentserver.conf").read_text()
    assert re.search(r"location ~ \^/\(api/\)\?pty/\[\^/\]\+/connect\$", site)
    assert "proxy_buffering off" in site and "client_max_body_size 10m" in site


def test_every_variable_of_the_env_file_and_the_unit_is_read():
    env_file = (DEPLOY / "agentserver.env.example").read_text()
    names = set(re.findall(r"^([A-Z_][A-Z0-9_]*)=", env_file, flags=re.MULTILINE))
    unit = (DEPLOY / "agentserver.service").read_text()
    names |= set(re.findall(r"\$\{([A-Z_][A-Z0-9_]*)\}", unit))
    assert {"DATABASE_URL", "REDIS_URL", "SECRET_KEY", "AGENTSERVER_FERNET_KEYS", "AGENTSERVER_SHARED_DIR"} <= names
    sources = "\n".join(path.read_text() for path in ROOT.glob("*/**/*.py")
                        if ".venv" not in path.parts and "tests" not in path.parts)
    unknown = {name for name in names - UNIT_VARIABLES - {"FORWARDED_ALLOW_IPS"} if f'"{name}"' not in sources}
    assert not unknown, unknown
    assert UNIT_VARIABLES <= names and "--workers ${AGENTSERVER_WORKERS}" in unit
    # FORWARDED_ALLOW_IPS is uvicorn's own (the worker trusts X-Forwarded-* only from those addresses)
    from pathlib import Path

    import uvicorn.config

    assert "FORWARDED_ALLOW_IPS" in Path(uvicorn.config.__file__).read_text()
