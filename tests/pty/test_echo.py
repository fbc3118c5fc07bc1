from tests.pty.conftest import Screen, create_pty, open_socket, shell_body


async def test_it_echoes_input_through_the_websocket(alice, cleanup_ptys):
    pty = create_pty(alice, **shell_body())
    async with open_socket(alice, pty["id"]) as ws:
        screen = Screen(ws)
        await screen.until(lambda s: s.cursors)
        await ws.send("echo hello-$((40+2))\r")
        await screen.expect("hello-42")


async def test_binary_frames_are_input_too(alice, cleanup_ptys):
    pty = create_pty(alice, **shell_body())
    async with open_socket(alice, pty["id"]) as ws:
        screen = Screen(ws)
        await screen.until(lambda s: s.cursors)
        await ws.send(b"echo binary-$((1+1))\r")
        await screen.expect("binary-2")


async def test_browsers_can_authenticate_with_the_auth_token_query(alice, cleanup_ptys):
    from websockets.asyncio.client import connect

    from tests.pty.conftest import ws_url

    pty = create_pty(alice, **shell_body())
    async with connect(ws_url(alice, pty["id"], query=f"auth_token={alice.basic_auth_token}")) as ws:
        screen = Screen(ws)
        await ws.send("echo via-query\r")
        await screen.expect("via-query")


async def test_the_v2_mount_speaks_the_same_protocol(alice, cleanup_ptys):
    pty = create_pty(alice, **shell_body())
    async with open_socket(alice, pty["id"], v2=True) as ws:
        screen = Screen(ws)
        await ws.send("echo v2-$((3*3))\r")
        await screen.expect("v2-9")
