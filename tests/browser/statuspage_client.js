// Reads every JSON endpoint of a status page with `statuspage.io`, an npm client that others wrote for
// Statuspage's public API, pointed at our page: `node statuspage_client.js <page URL>`.
// Prints what each of the client's calls returned, by its name, as one JSON object; any error exits 1.
// tests/browser/test_status_clients.py runs it.
const {Statuspage} = require("statuspage.io");
const {Endpoint} = require("statuspage.io/dist/Endpoints");

// The page id only makes the default host (https://<id>.statuspage.io), which setApiUrl replaces:
// the client asks for /api/v2/<name>.json under the URL it is given.
const statuspage = new Statuspage("self-hosted");
statuspage.setApiUrl(process.argv[2]);
const api = statuspage.api;
const calls = {
  getSummary: () => api.getSummary(),
  getStatus: () => api.getStatus(),
  getComponents: () => api.getComponents(),
  "incidents.getAll": () => api.incidents.getAll(),
  "incidents.getUnresolved": () => api.incidents.getUnresolved(),
  // The client's three maintenance calls all ask for upcoming.json (a bug of the client's), so the
  // other two addresses are read through its own HTTP client: all() as the client builds it, and
  // active() with the file name the client misspells (its ACTIVE_JSON is "upcoming.json") corrected.
  "scheduledMaintenances.getUpcoming": () => api.scheduledMaintenances.getUpcoming(),
  "scheduledMaintenances.getActive": () => api.scheduledMaintenances.getActive(),
  "scheduledMaintenances.getAll": () => api.scheduledMaintenances.getAll(),
  "get(ScheduledMaintenances.all())": () => statuspage.apiClient.get(Endpoint.ScheduledMaintenances.all()).then((r) => r.data),
  "get(ScheduledMaintenances.active())": () =>
    statuspage.apiClient.get(Endpoint.ScheduledMaintenances.active().replace("upcoming.json", "active.json"))
      .then((r) => r.data),
};

(async () => {
  const results = {};
  for (const [name, call] of Object.entries(calls)) {
    results[name] = await call();
  }
  process.stdout.write(JSON.stringify(results));
})().catch((error) => {
  process.stderr.write(`${error.message} (${error.config ? error.config.url : "no request"})\n`);
  process.exit(1);
});
