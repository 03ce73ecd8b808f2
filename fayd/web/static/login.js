"use strict";
// The login page: one password, sent as JSON (the server refuses anything else).
document.addEventListener("DOMContentLoaded", () => {
  const set = document.body.dataset.password === "yes";
  document.getElementById("no-password").hidden = set;
  const form = document.getElementById("login");
  form.hidden = !set;
  const error = document.getElementById("login-error");
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    error.textContent = "";
    const password = document.getElementById("password").value;
    let answer;
    try {
      answer = await fetch("/login", {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        credentials: "same-origin",
        body: JSON.stringify({ password }),
      });
    } catch (e) {
      error.textContent = "fayd did not answer. Is the box on?";
      return;
    }
    if (answer.ok) {
      window.location.assign("/");
      return;
    }
    const body = await answer.json().catch(() => ({}));
    error.textContent = answer.status === 401 ? "That password is not right." : (body.error || "Could not log in.");
  });
});
