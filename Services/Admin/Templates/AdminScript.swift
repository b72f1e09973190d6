/// The site's one script, served at /assets/admin.js (the content security policy allows only the admin's own
/// script files). Pages work without it; it adds what HTML alone cannot do.
enum AdminScript {
    static let javaScript = #"""
        "use strict";
        // Forms safe to repeat (FormSubmission): the form's id moves into a text input, which the browser
        // restores on Back with the typed values, so Back + Save sends the same command again.
        for (const input of document.querySelectorAll("input[data-form-id]")) {
          if (!input.value) input.value = input.dataset.formId;
        }

        // The picture picker: Add puts the library picture's address on a line of its own in Main Pictures.
        for (const button of document.querySelectorAll("button[data-add-picture]")) {
          const field = document.getElementById("field-pictures");
          if (!field) continue;
          button.hidden = false;
          button.nextElementSibling.hidden = true;
          button.addEventListener("click", () => {
            const text = field.value.replace(/\s+$/, "");
            field.value = (text ? text + "\n" : "") + button.dataset.addPicture;
            field.focus();
          });
        }

        // Pages that follow work in progress (an import, System Status) reload themselves until paused.
        const refresh = document.querySelector("[data-refresh]");
        if (refresh) {
          const toggle = refresh.querySelector("[data-refresh-toggle]");
          // Paused per page: pausing System Status leaves an import's progress running.
          const key = "itour-refresh-paused:" + location.pathname;
          const paused = sessionStorage.getItem(key) === "1";
          let timer = paused ? null : setTimeout(() => location.reload(), Number(refresh.dataset.refresh) * 1000);
          toggle.hidden = false;
          toggle.textContent = paused ? "Resume updates" : "Pause updates";
          toggle.addEventListener("click", () => {
            if (timer) {
              clearTimeout(timer);
              timer = null;
              sessionStorage.setItem(key, "1");
              toggle.textContent = "Resume updates";
            } else {
              sessionStorage.removeItem(key);
              location.reload();
            }
          });
        }

        // Print buttons (the QR sheet): shown only where script runs, which printing needs.
        for (const button of document.querySelectorAll("button[data-print]")) {
          button.hidden = false;
          button.addEventListener("click", () => window.print());
        }

        // The media library's upload (MediaPages): sent by XMLHttpRequest so a large file's progress shows in the
        // form's <progress>. Where the answer redirects, the browser goes; an answer without a redirect (a refusal)
        // replaces this page. Without the script the form posts as any other.
        for (const form of document.querySelectorAll("form.media-upload")) {
          const bar = form.querySelector("progress.upload-progress");
          const input = form.querySelector("input[type=file][data-max-bytes]");
          form.addEventListener("submit", (event) => {
            event.preventDefault();
            const file = input && input.files[0];
            if (file && file.size > Number(input.dataset.maxBytes)) {
              alert(file.name + " is larger than the library takes (" + input.dataset.maxLabel + "); nothing was uploaded.");
              return;
            }
            const request = new XMLHttpRequest();
            request.open("POST", form.action);
            request.upload.addEventListener("progress", (progress) => {
              if (!progress.lengthComputable || !bar) return;
              bar.hidden = false;
              bar.value = Math.round(100 * progress.loaded / progress.total);
              bar.textContent = bar.value + "%";
            });
            request.addEventListener("load", () => {
              if (request.responseURL && new URL(request.responseURL).pathname + new URL(request.responseURL).search !== form.getAttribute("action")) {
                location.assign(request.responseURL);
              } else {
                document.open();
                document.write(request.responseText);
                document.close();
              }
            });
            // Not sent again by itself: the file may have arrived, and a second upload would add it twice.
            request.addEventListener("error", () => {
              alert("The upload stopped (the connection was lost). Check the list of files before uploading again.");
              location.assign(form.getAttribute("action"));
            });
            request.send(new FormData(form));
          });
        }

        // Maps (AdminMap): drawn once Leaflet, a deferred script after this one, has run.
        document.addEventListener("DOMContentLoaded", () => {
          if (!window.L) return;
          for (const box of document.querySelectorAll(".map-box[data-map]")) drawMap(box);
        });

        function drawMap(box) {
          const stops = JSON.parse(box.dataset.stops || "[]");
          const canvas = document.createElement("div");
          canvas.className = "map-canvas";
          box.querySelector("svg")?.remove();
          box.prepend(canvas);
          const map = L.map(canvas, { scrollWheelZoom: false });
          if (box.dataset.tiles) {
            L.tileLayer(box.dataset.tiles, { maxZoom: 19, attribution: box.dataset.attribution }).addTo(map);
          }
          const points = stops.map((s) => L.latLng(s.lat, s.lon));
          // A tour's route as walked, in its colour; else the straight lines between its stops.
          const route = JSON.parse(box.dataset.route || "[]").map(([lat, lon]) => L.latLng(lat, lon));
          const routeStyle = { className: "map-route-line", color: box.dataset.color || "#0b5cad", weight: 5, opacity: 0.85 };
          const routeLine = route.length > 1 ? L.polyline(route, routeStyle).addTo(map) : null;
          if (!routeLine && points.length > 1) L.polyline(points, { className: "map-route" }).addTo(map);
          const labels = [];
          stops.forEach((stop, index) => {
            const marker = L.marker(points[index], {
              icon: L.divIcon({ className: "map-stop", html: String(index + 1), iconSize: [24, 24] }),
              title: `${index + 1}. ${stop.name}`, keyboard: false,
            }).addTo(map);
            labels.push({ marker, text: stop.name });
          });
          const labelPane = map.createPane("map-labels");
          const placeLabels = () => placeWithoutOverlap(map, labelPane, labels);
          map.on("zoomend viewreset", placeLabels);

          if (box.dataset.map === "poi") {
            placePin(box, map, points);
          } else {
            map.fitBounds(L.latLngBounds(points.concat(route)).pad(0.15), { maxZoom: 18 });
            drawRoute(map, routeLine, routeStyle);
          }
          placeLabels();
        }

        // The tour form's Route: with "Draw the route" ticked, each click on the map adds a point to its GeoJSON
        // LineString (a Feature's geometry is kept as its line), and the line on the map follows.
        function drawRoute(map, line, style) {
          const field = document.querySelector("textarea[name=route]");
          const toggle = document.getElementById("draw-route");
          if (!field || !toggle) return;
          toggle.closest(".draw-route").hidden = false;
          const read = () => {
            try {
              const value = JSON.parse(field.value || "null");
              const geometry = value && value.type === "Feature" ? value.geometry : value;
              return geometry && geometry.type === "LineString" && Array.isArray(geometry.coordinates) ? geometry.coordinates : [];
            } catch { return []; }
          };
          const write = (coordinates) => {
            field.value = coordinates.length ? JSON.stringify({ coordinates, type: "LineString" }) : "";
            const latlngs = coordinates.map(([lon, lat]) => L.latLng(lat, lon));
            if (line) line.setLatLngs(latlngs); else line = L.polyline(latlngs, style).addTo(map);
          };
          map.on("click", (event) => {
            if (!toggle.checked) return;
            // Text that is not a LineString (a typo, a MultiLineString) is staff's: never replaced by a click.
            if (field.value.trim() && !read().length) {
              alert("Route holds text that is not a GeoJSON LineString; correct or clear it to draw.");
              return;
            }
            const at = event.latlng.wrap();
            write(read().concat([[Number(at.lng.toFixed(6)), Number(at.lat.toFixed(6))]]));
          });
          document.getElementById("undo-route-point").addEventListener("click", () => {
            if (read().length) write(read().slice(0, -1));
          });
        }

        // Labels beside their pins, each at the first of four sides where it overlaps no other label or pin;
        // one with no free side is left out (its pin keeps the name as a tooltip).
        function placeWithoutOverlap(map, pane, labels) {
          pane.replaceChildren();
          const taken = labels.map(({ marker }) => {
            const p = map.latLngToLayerPoint(marker.getLatLng());
            return { left: p.x - 12, top: p.y - 12, right: p.x + 12, bottom: p.y + 12 };
          });
          const overlaps = (a, b) => a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom;
          for (const { marker, text } of labels) {
            const element = document.createElement("span");
            element.className = "map-label";
            element.textContent = text;
            pane.appendChild(element);
            const width = element.offsetWidth, height = element.offsetHeight;
            const p = map.latLngToLayerPoint(marker.getLatLng());
            const sides = [[p.x + 15, p.y - height / 2], [p.x - 15 - width, p.y - height / 2],
                           [p.x - width / 2, p.y - 15 - height], [p.x - width / 2, p.y + 15]];
            const free = sides.map(([left, top]) => ({ left, top, right: left + width, bottom: top + height }))
              .find((box) => !taken.some((other) => overlaps(box, other)));
            if (!free) { element.remove(); continue; }
            taken.push(free);
            L.DomUtil.setPosition(element, L.point(free.left, free.top));
          }
        }

        // The POI form's pin: a click places it, dragging moves it, and Latitude and Longitude follow; typing
        // coordinates moves it.
        function placePin(box, map, neighbours) {
          const form = box.closest("form");
          const latitude = form.querySelector("input[name=latitude]");
          const longitude = form.querySelector("input[name=longitude]");
          const typed = () => {
            const lat = parseFloat(latitude.value), lon = parseFloat(longitude.value);
            return Number.isFinite(lat) && Number.isFinite(lon) && Math.abs(lat) <= 90 && Math.abs(lon) <= 180 ? L.latLng(lat, lon) : null;
          };
          let pin = null;
          const put = (latlng) => {
            if (pin) { pin.setLatLng(latlng); return; }
            pin = L.marker(latlng, { draggable: true, title: "This point of interest", icon: L.divIcon({ className: "map-pin", iconSize: [22, 22] }) })
              .addTo(map);
            pin.on("dragend", () => fill(pin.getLatLng()));
          };
          const fill = (latlng) => {
            const wrapped = latlng.wrap();
            latitude.value = wrapped.lat.toFixed(6);
            longitude.value = wrapped.lng.toFixed(6);
          };
          map.on("click", (event) => { put(event.latlng); fill(event.latlng); });
          for (const input of [latitude, longitude]) {
            input.addEventListener("change", () => { const at = typed(); if (at) { put(at); map.panTo(at); } });
          }
          const start = typed();
          if (start) put(start);
          const [lat, lon] = (box.dataset.center || "").split(",").map(parseFloat);
          if (start) {
            map.setView(start, 17);
          } else if (neighbours.length) {
            map.fitBounds(L.latLngBounds(neighbours).pad(0.3), { maxZoom: 17 });
          } else if (Number.isFinite(lat) && Number.isFinite(lon)) {
            map.setView([lat, lon], 16);
          } else {
            map.setView([20, 0], 2);
          }
        }
        """#
}
