// agentserver: when the browser's session ends (it expired, it was signed out in another tab, the password
// changed), the server answers the web app's next call 401. opencode's app would retry quietly forever; this
// sends the person to the sign-in page instead, to come back where they were. Served on the app's page
// before the app's own scripts (web_app/assets.py), so the app's fetch is this one.
(function () {
  "use strict";
  var SIGNIN = "/signin";
  var leaving = false;

  function signIn() {
    if (leaving || location.pathname === SIGNIN) return;
    leaving = true;
    location.assign(SIGNIN + "?next=" + encodeURIComponent(location.pathname + location.search + location.hash));
  }

  function ours(url) {
    try {
      return new URL(url, location.href).origin === location.origin;
    } catch (error) {
      return false;
    }
  }

  var originalFetch = window.fetch;
  window.fetch = function (input, init) {
    var url = input instanceof Request ? input.url : String(input);
    return originalFetch.apply(this, arguments).then(function (response) {
      if (response.status === 401 && ours(url)) signIn();
      return response;
    });
  };

  // A terminal's socket closes with 4401 when the credential that opened it ended.
  var OriginalWebSocket = window.WebSocket;
  function WatchedWebSocket(url, protocols) {
    var socket = protocols === undefined ? new OriginalWebSocket(url) : new OriginalWebSocket(url, protocols);
    socket.addEventListener("close", function (event) {
      if (event.code === 4401 && ours(String(url).replace(/^ws/, "http"))) signIn();
    });
    return socket;
  }
  WatchedWebSocket.prototype = OriginalWebSocket.prototype;
  ["CONNECTING", "OPEN", "CLOSING", "CLOSED"].forEach(function (name) {
    WatchedWebSocket[name] = OriginalWebSocket[name];
  });
  window.WebSocket = WatchedWebSocket;
})();
