// Passkeys (WebAuthn) for the sign-in pages: a button with data-passkey="register" or "sign-in"
// asks the server for options (data-options), calls navigator.credentials, sends the answer
// (data-answer) and follows the location the server gives. No inline script: the CSP forbids it.
(function () {
  function toBytes(text) {
    var base64 = text.replace(/-/g, "+").replace(/_/g, "/");
    while (base64.length % 4) base64 += "=";
    var raw = atob(base64);
    var bytes = new Uint8Array(raw.length);
    for (var i = 0; i < raw.length; i++) bytes[i] = raw.charCodeAt(i);
    return bytes.buffer;
  }

  function toText(buffer) {
    var bytes = new Uint8Array(buffer);
    var raw = "";
    for (var i = 0; i < bytes.length; i++) raw += String.fromCharCode(bytes[i]);
    return btoa(raw).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
  }

  function descriptors(list) {
    return (list || []).map(function (item) {
      return { type: item.type, id: toBytes(item.id), transports: item.transports };
    });
  }

  function created(credential) {
    var response = credential.response;
    return {
      id: credential.id,
      rawId: toText(credential.rawId),
      type: credential.type,
      response: {
        clientDataJSON: toText(response.clientDataJSON),
        attestationObject: toText(response.attestationObject),
        transports: response.getTransports ? response.getTransports() : []
      },
      clientExtensionResults: credential.getClientExtensionResults(),
      authenticatorAttachment: credential.authenticatorAttachment
    };
  }

  function asserted(credential) {
    var response = credential.response;
    return {
      id: credential.id,
      rawId: toText(credential.rawId),
      type: credential.type,
      response: {
        clientDataJSON: toText(response.clientDataJSON),
        authenticatorData: toText(response.authenticatorData),
        signature: toText(response.signature),
        userHandle: response.userHandle ? toText(response.userHandle) : null
      },
      clientExtensionResults: credential.getClientExtensionResults(),
      authenticatorAttachment: credential.authenticatorAttachment
    };
  }

  function post(url, body) {
    return fetch(url, {
      method: "POST",
      credentials: "same-origin",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify(body)
    }).then(function (response) {
      return response.json().then(function (json) {
        if (!response.ok) throw new Error(json.error || "The server refused the passkey.");
        return json;
      });
    });
  }

  function run(button) {
    var status = document.getElementById("passkey-status");
    var csrf = button.getAttribute("data-csrf");
    var registering = button.getAttribute("data-passkey") === "register";
    if (!window.PublicKeyCredential) {
      status.textContent = "This browser has no passkeys: use a code instead.";
      return;
    }
    button.disabled = true;
    status.textContent = "";
    post(button.getAttribute("data-options"), { csrf: csrf })
      .then(function (options) {
        options.challenge = toBytes(options.challenge);
        if (registering) {
          options.user.id = toBytes(options.user.id);
          options.excludeCredentials = descriptors(options.excludeCredentials);
          return navigator.credentials.create({ publicKey: options }).then(created);
        }
        options.allowCredentials = descriptors(options.allowCredentials);
        return navigator.credentials.get({ publicKey: options }).then(asserted);
      })
      .then(function (credential) {
        return post(button.getAttribute("data-answer"), { csrf: csrf, credential: credential });
      })
      .then(function (answer) {
        window.location.assign(answer.location);
      })
      .catch(function (error) {
        status.textContent = error.message || "The passkey did not work. Try again.";
        button.disabled = false;
      });
  }

  document.addEventListener("click", function (event) {
    var button = event.target.closest("[data-passkey]");
    if (button) run(button);
  });
})();
