/// The feed's OpenAPI 3.1 document, served at `GET /openapi.json`. Written by hand to say exactly what
/// the handlers accept: parameter patterns and bounds here are the ones `FeedRoutes` enforces (a
/// schemathesis run in tests/feed checks that both agree and that no request gets a 5xx).
enum OpenAPIDocument {
    /// `near=LAT,LON`: the same pattern `QueryParameters.coordinate` requires.
    static let nearPattern = #"^-?(?:90(?:\.0+)?|[1-8]?[0-9](?:\.[0-9]+)?),-?(?:180(?:\.0+)?|(?:1[0-7][0-9]|[1-9]?[0-9])(?:\.[0-9]+)?)$"#

    static let json: String = #"""
    {
      "openapi": "3.1.0",
      "info": {
        "title": "iTour feed",
        "version": "1.0.0",
        "summary": "The phones' API: published tours and points of interest, nearby and search, the legacy iTour XML feeds, and tracking events.",
        "description": "Every GET answers with an ETag and Cache-Control, honours If-None-Match with 304, and sends gzip when the request accepts it. Errors are application/problem+json (RFC 9457). Only published content is visible: a tour when it is published, a POI when a published tour stops there."
      },
      "servers": [{"url": "/"}],
      "paths": {
        "/v1/tours": {
          "get": {
            "operationId": "listTours",
            "summary": "Published tours, by name",
            "responses": {
              "200": {"description": "The published tours", "headers": {"ETag": {"$ref": "#/components/headers/ETag"}, "Cache-Control": {"$ref": "#/components/headers/CacheControl"}},
                      "content": {"application/json": {"schema": {"$ref": "#/components/schemas/TourList"}}}},
              "304": {"$ref": "#/components/responses/NotModified"}
            }
          }
        },
        "/v1/tours/{id}": {
          "get": {
            "operationId": "getTour",
            "summary": "A published tour with its stops in walking order, their bounding box and the walking distance along them",
            "parameters": [{"$ref": "#/components/parameters/TourId"}],
            "responses": {
              "200": {"description": "The tour", "headers": {"ETag": {"$ref": "#/components/headers/ETag"}, "Cache-Control": {"$ref": "#/components/headers/CacheControl"}},
                      "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Tour"}}}},
              "304": {"$ref": "#/components/responses/NotModified"},
              "400": {"$ref": "#/components/responses/BadRequest"},
              "404": {"$ref": "#/components/responses/NotFound"}
            }
          }
        },
        "/v1/pois": {
          "get": {
            "operationId": "nearbyPois",
            "summary": "POIs within a radius of a point, nearest first, with great-circle distance (R = 6371008.8 m) and initial bearing",
            "parameters": [
              {"name": "near", "in": "query", "required": true, "description": "LAT,LON in decimal degrees",
               "schema": {"type": "string", "pattern": "NEAR_PATTERN"}, "example": "34.2261,-77.8767"},
              {"name": "radius", "in": "query", "description": "Metres", "schema": {"type": "number", "minimum": 0, "maximum": 100000, "default": 1000}},
              {"name": "limit", "in": "query", "schema": {"type": "integer", "minimum": 1, "maximum": 200, "default": 20}},
              {"name": "category", "in": "query", "description": "A category path; matches it and its subcategories (Shop matches Shop/Fashion), case- and accent-insensitive",
               "schema": {"type": "string", "minLength": 1, "maxLength": 200}}
            ],
            "responses": {
              "200": {"description": "Nearby POIs", "headers": {"ETag": {"$ref": "#/components/headers/ETag"}, "Cache-Control": {"$ref": "#/components/headers/CacheControl"}},
                      "content": {"application/json": {"schema": {"$ref": "#/components/schemas/NearbyResult"}}}},
              "304": {"$ref": "#/components/responses/NotModified"},
              "400": {"$ref": "#/components/responses/BadRequest"}
            }
          }
        },
        "/v1/pois/{id}": {
          "get": {
            "operationId": "getPoi",
            "summary": "A visible POI in full, with the published tours that stop there",
            "parameters": [{"$ref": "#/components/parameters/PoiId"}],
            "responses": {
              "200": {"description": "The POI", "headers": {"ETag": {"$ref": "#/components/headers/ETag"}, "Cache-Control": {"$ref": "#/components/headers/CacheControl"}},
                      "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Poi"}}}},
              "304": {"$ref": "#/components/responses/NotModified"},
              "400": {"$ref": "#/components/responses/BadRequest"},
              "404": {"$ref": "#/components/responses/NotFound"}
            }
          }
        },
        "/v1/pois/{id}/page": {
          "get": {
            "operationId": "getPoiPage",
            "summary": "A small mobile HTML page about the POI, for the app's embedded browser",
            "parameters": [{"$ref": "#/components/parameters/PoiId"}],
            "responses": {
              "200": {"description": "The page", "headers": {"ETag": {"$ref": "#/components/headers/ETag"}, "Cache-Control": {"$ref": "#/components/headers/CacheControl"}},
                      "content": {"text/html": {"schema": {"type": "string"}}}},
              "304": {"$ref": "#/components/responses/NotModified"},
              "400": {"$ref": "#/components/responses/BadRequest"},
              "404": {"$ref": "#/components/responses/NotFound"}
            }
          }
        },
        "/v1/search": {
          "get": {
            "operationId": "search",
            "summary": "Tours and POIs whose name, summary or buildings contain the text, case- and accent-insensitive, by name",
            "parameters": [
              {"name": "q", "in": "query", "required": true, "schema": {"type": "string", "minLength": 1, "maxLength": 200}, "example": "hall"},
              {"name": "limit", "in": "query", "description": "At most this many tours and this many POIs",
               "schema": {"type": "integer", "minimum": 1, "maximum": 100, "default": 20}}
            ],
            "responses": {
              "200": {"description": "Matches", "headers": {"ETag": {"$ref": "#/components/headers/ETag"}, "Cache-Control": {"$ref": "#/components/headers/CacheControl"}},
                      "content": {"application/json": {"schema": {"$ref": "#/components/schemas/SearchResult"}}}},
              "304": {"$ref": "#/components/responses/NotModified"},
              "400": {"$ref": "#/components/responses/BadRequest"}
            }
          }
        },
        "/v1/legacy/tours.xml": {
          "get": {
            "operationId": "legacyTours",
            "summary": "The original iTour app's available-tours feed (AvTours): channel/name/description/item with id, title, summary",
            "responses": {
              "200": {"description": "The feed", "headers": {"ETag": {"$ref": "#/components/headers/ETag"}, "Cache-Control": {"$ref": "#/components/headers/CacheControl"}},
                      "content": {"application/xml": {"schema": {"type": "string"}}}},
              "304": {"$ref": "#/components/responses/NotModified"}
            }
          }
        },
        "/v1/legacy/tours/{id}/pois.xml": {
          "get": {
            "operationId": "legacyTourPois",
            "summary": "The original iTour app's POI feed of one tour: items with poiID, title, summary, latitude, longitude",
            "parameters": [{"name": "id", "in": "path", "required": true, "description": "The id tours.xml gives (the legacy number, or the UUID of a tour without one)",
                            "schema": {"type": "string", "minLength": 1, "maxLength": 100}, "example": "11"}],
            "responses": {
              "200": {"description": "The feed", "headers": {"ETag": {"$ref": "#/components/headers/ETag"}, "Cache-Control": {"$ref": "#/components/headers/CacheControl"}},
                      "content": {"application/xml": {"schema": {"type": "string"}}}},
              "304": {"$ref": "#/components/responses/NotModified"},
              "404": {"$ref": "#/components/responses/NotFound"}
            }
          }
        },
        "/v1/events": {
          "post": {
            "operationId": "postEvents",
            "summary": "Report tracking events",
            "description": "At most 500 events and 1 MiB per batch. Each event is checked on its own (see the TrackingEvent schema): bad ones are rejected with their index and reason, the rest are accepted. 202 comes only after the broker stored the accepted events. Each device may send FEED_EVENTS_PER_MINUTE_PER_DEVICE events per minute (default 600), and each client address FEED_EVENTS_PER_MINUTE_PER_CLIENT (default 60000; every element of a batch counts, and every batch at least one).",
            "requestBody": {
              "required": true,
              "content": {"application/json": {"schema": {"$ref": "#/components/schemas/EventBatch"}}}
            },
            "responses": {
              "202": {"description": "The broker has the accepted events",
                      "content": {"application/json": {"schema": {"$ref": "#/components/schemas/EventBatchResult"}}}},
              "400": {"$ref": "#/components/responses/BadRequest"},
              "413": {"description": "The body is over 1 MiB", "content": {"application/problem+json": {"schema": {"$ref": "#/components/schemas/Problem"}}}},
              "415": {"description": "The body is not JSON", "content": {"application/problem+json": {"schema": {"$ref": "#/components/schemas/Problem"}}}},
              "429": {"description": "The client address or a device in the batch is over its rate; nothing was accepted",
                      "headers": {"Retry-After": {"$ref": "#/components/headers/RetryAfter"}},
                      "content": {"application/problem+json": {"schema": {"$ref": "#/components/schemas/Problem"}}}},
              "503": {"description": "The broker is unreachable; nothing was accepted",
                      "headers": {"Retry-After": {"$ref": "#/components/headers/RetryAfter"}},
                      "content": {"application/problem+json": {"schema": {"$ref": "#/components/schemas/Problem"}}}}
            }
          }
        },
        "/openapi.json": {
          "get": {
            "operationId": "openapi",
            "summary": "This document",
            "responses": {
              "200": {"description": "OpenAPI 3.1", "headers": {"ETag": {"$ref": "#/components/headers/ETag"}, "Cache-Control": {"$ref": "#/components/headers/CacheControl"}},
                      "content": {"application/json": {"schema": {"type": "object"}}}},
              "304": {"$ref": "#/components/responses/NotModified"}
            }
          }
        },
        "/health": {
          "get": {
            "operationId": "health",
            "summary": "The process is alive",
            "responses": {"200": {"description": "Alive", "content": {"application/json": {"schema": {"type": "object", "required": ["status"], "properties": {"status": {"const": "ok"}}}}}}}
          }
        },
        "/ready": {
          "get": {
            "operationId": "ready",
            "summary": "Broker reachable and the catalog projection loaded",
            "responses": {
              "200": {"description": "Ready", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Readiness"}}}},
              "503": {"description": "Not ready", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Readiness"}}}}
            }
          }
        },
        "/metrics": {
          "get": {
            "operationId": "metrics",
            "summary": "Prometheus metrics",
            "responses": {"200": {"description": "Prometheus text format", "content": {"text/plain": {"schema": {"type": "string"}}}}}
          }
        }
      },
      "components": {
        "headers": {
          "ETag": {"required": true, "description": "Changes when the content does", "schema": {"type": "string"}},
          "CacheControl": {"required": true, "schema": {"type": "string"}},
          "RetryAfter": {"required": true, "description": "Seconds to wait before sending again", "schema": {"type": "string", "pattern": "^[0-9]+$"}}
        },
        "parameters": {
          "TourId": {"name": "id", "in": "path", "required": true, "schema": {"type": "string", "format": "uuid"},
                     "example": "00000001-0000-4000-8000-000000000011", "description": "The demo content's Students Tour (Beta) in the example"},
          "PoiId": {"name": "id", "in": "path", "required": true, "schema": {"type": "string", "format": "uuid"},
                    "example": "00000002-0000-4000-8000-000000001014", "description": "The demo content's CIS Building in the example"}
        },
        "responses": {
          "NotModified": {"description": "The content still has the ETag named in If-None-Match",
                          "headers": {"ETag": {"$ref": "#/components/headers/ETag"}}},
          "BadRequest": {"description": "A parameter or the body is not what this operation takes; detail says which",
                         "content": {"application/problem+json": {"schema": {"$ref": "#/components/schemas/Problem"}}}},
          "NotFound": {"description": "No such published content",
                       "content": {"application/problem+json": {"schema": {"$ref": "#/components/schemas/Problem"}}}}
        },
        "schemas": {
          "Problem": {
            "type": "object", "required": ["type", "title", "status", "detail"],
            "properties": {"type": {"type": "string"}, "title": {"type": "string"}, "status": {"type": "integer"}, "detail": {"type": "string"}}
          },
          "TourSummary": {
            "type": "object", "required": ["id", "name", "summary", "stopCount", "updatedAt", "legacyId"],
            "properties": {
              "id": {"type": "string", "format": "uuid"},
              "name": {"type": "string"},
              "summary": {"type": "string"},
              "stopCount": {"type": "integer", "minimum": 0},
              "updatedAt": {"type": "string", "format": "date-time"},
              "legacyId": {"type": ["integer", "null"], "description": "The original iTour id, when the tour has one"}
            }
          },
          "TourList": {
            "type": "object", "required": ["tours"],
            "properties": {"tours": {"type": "array", "items": {"$ref": "#/components/schemas/TourSummary"}}}
          },
          "Stop": {
            "type": "object", "required": ["id", "name", "summary", "latitude", "longitude", "category"],
            "properties": {
              "id": {"type": "string", "format": "uuid", "description": "The POI's id"},
              "name": {"type": "string"},
              "summary": {"type": "string"},
              "latitude": {"type": "number", "minimum": -90, "maximum": 90},
              "longitude": {"type": "number", "minimum": -180, "maximum": 180},
              "category": {"type": ["string", "null"]}
            }
          },
          "BoundingBox": {
            "type": "object", "required": ["minLatitude", "minLongitude", "maxLatitude", "maxLongitude"],
            "properties": {
              "minLatitude": {"type": "number"}, "minLongitude": {"type": "number"},
              "maxLatitude": {"type": "number"}, "maxLongitude": {"type": "number"}
            }
          },
          "Tour": {
            "type": "object",
            "required": ["id", "name", "summary", "purpose", "legacyId", "stopCount", "updatedAt", "version", "stops", "bbox", "walkingDistanceMeters"],
            "properties": {
              "id": {"type": "string", "format": "uuid"},
              "name": {"type": "string"},
              "summary": {"type": "string"},
              "purpose": {"type": "string"},
              "legacyId": {"type": ["integer", "null"]},
              "stopCount": {"type": "integer", "minimum": 0},
              "updatedAt": {"type": "string", "format": "date-time"},
              "version": {"type": "integer", "minimum": 1},
              "stops": {"type": "array", "items": {"$ref": "#/components/schemas/Stop"}},
              "bbox": {"oneOf": [{"$ref": "#/components/schemas/BoundingBox"}, {"type": "null"}], "description": "Null for a tour without stops"},
              "walkingDistanceMeters": {"type": "number", "minimum": 0, "description": "Great-circle distance along the stops in order"}
            }
          },
          "MediaLink": {
            "type": "object", "required": ["name", "type", "url"],
            "properties": {
              "name": {"type": "string"},
              "type": {"enum": ["page", "video", "audio", "image"]},
              "url": {"type": "string", "format": "uri"}
            }
          },
          "Poi": {
            "type": "object",
            "required": ["id", "name", "summary", "description", "latitude", "longitude", "category", "buildings", "pictures", "links",
                         "address", "phone", "website", "openingHours", "tourIds", "legacyId", "updatedAt", "version"],
            "properties": {
              "id": {"type": "string", "format": "uuid"},
              "name": {"type": "string"},
              "summary": {"type": "string"},
              "description": {"type": "string"},
              "latitude": {"type": "number", "minimum": -90, "maximum": 90},
              "longitude": {"type": "number", "minimum": -180, "maximum": 180},
              "category": {"type": ["string", "null"]},
              "buildings": {"type": "array", "items": {"type": "string"}},
              "pictures": {"type": "array", "items": {"type": "string"}},
              "links": {"type": "array", "items": {"$ref": "#/components/schemas/MediaLink"}},
              "address": {"type": ["string", "null"]},
              "phone": {"type": ["string", "null"]},
              "website": {"type": ["string", "null"]},
              "openingHours": {"type": ["string", "null"]},
              "tourIds": {"type": "array", "items": {"type": "string", "format": "uuid"}, "description": "Published tours that stop here, by name"},
              "legacyId": {"type": ["integer", "null"]},
              "updatedAt": {"type": "string", "format": "date-time"},
              "version": {"type": "integer", "minimum": 1}
            }
          },
          "PoiListing": {
            "type": "object", "required": ["id", "name", "summary", "latitude", "longitude", "category"],
            "properties": {
              "id": {"type": "string", "format": "uuid"},
              "name": {"type": "string"},
              "summary": {"type": "string"},
              "latitude": {"type": "number"},
              "longitude": {"type": "number"},
              "category": {"type": ["string", "null"]}
            }
          },
          "NearbyPoi": {
            "allOf": [{"$ref": "#/components/schemas/PoiListing"}],
            "type": "object", "required": ["distanceMeters", "bearingDegrees"],
            "properties": {
              "distanceMeters": {"type": "number", "minimum": 0},
              "bearingDegrees": {"type": "number", "minimum": 0, "exclusiveMaximum": 360, "description": "Initial bearing, 0 = north, clockwise"}
            }
          },
          "NearbyResult": {
            "type": "object", "required": ["pois"],
            "properties": {"pois": {"type": "array", "items": {"$ref": "#/components/schemas/NearbyPoi"}}}
          },
          "SearchResult": {
            "type": "object", "required": ["tours", "pois"],
            "properties": {
              "tours": {"type": "array", "items": {"$ref": "#/components/schemas/TourSummary"}},
              "pois": {"type": "array", "items": {"$ref": "#/components/schemas/PoiListing"}}
            }
          },
          "EventBatch": {
            "type": "object", "required": ["events"],
            "properties": {
              "events": {"type": "array", "maxItems": 500,
                         "description": "Tracking events. Each is validated on its own against TrackingEvent; one that fails is rejected with its reason, not the batch.",
                         "items": {}}
            },
            "example": {"events": [{"id": "0b5f3c2e-6d1a-4f7e-9c3b-2a1d5e8f7a90", "type": "poi.viewed", "deviceId": "device-1",
                                    "occurredAt": "2025-05-01T14:30:00Z", "poiId": "00000002-0000-4000-8000-000000001011", "via": "map"}]}
          },
          "EventBatchResult": {
            "type": "object", "required": ["accepted", "rejected"],
            "properties": {
              "accepted": {"type": "integer", "minimum": 0},
              "rejected": {"type": "array", "items": {
                "type": "object", "required": ["index", "reason"],
                "properties": {"index": {"type": "integer", "minimum": 0}, "reason": {"type": "string"}}
              }}
            }
          },
          "TrackingEvent": {
            "description": "One event from a phone (DESIGN.md, Tracking events). Rejected when occurredAt is more than 30 days old or more than 5 minutes in the future, when the type is unknown, or when a field its type needs is missing.",
            "type": "object", "required": ["id", "type", "deviceId", "occurredAt"],
            "properties": {
              "id": {"type": "string", "format": "uuid", "description": "Made by the client; the dedupe key"},
              "type": {"enum": ["device.registered", "tour.started", "tour.completed", "poi.viewed", "poi.arrived", "poi.left", "media.played"]},
              "deviceId": {"type": "string", "minLength": 1, "maxLength": 128},
              "touristId": {"type": "string", "minLength": 1, "maxLength": 128},
              "occurredAt": {"type": "string", "format": "date-time"},
              "platform": {"type": "string", "description": "device.registered"},
              "osVersion": {"type": "string", "description": "device.registered"},
              "model": {"type": "string", "description": "device.registered"},
              "appVersion": {"type": "string", "description": "device.registered"},
              "tourId": {"type": "string", "format": "uuid", "description": "tour.started, tour.completed; optional for poi.viewed, poi.arrived"},
              "poiId": {"type": "string", "format": "uuid", "description": "poi.viewed, poi.arrived, poi.left, media.played"},
              "durationSeconds": {"type": "number", "minimum": 0, "maximum": 604800, "description": "tour.completed"},
              "dwellSeconds": {"type": "number", "minimum": 0, "maximum": 604800, "description": "poi.left"},
              "via": {"enum": ["map", "list", "search", "nearby"], "description": "poi.viewed"},
              "url": {"type": "string", "description": "media.played"},
              "mediaType": {"enum": ["page", "video", "audio", "image"], "description": "media.played"}
            }
          },
          "Readiness": {
            "type": "object", "required": ["ready", "checks"],
            "properties": {"ready": {"type": "boolean"}, "service": {"type": "string"}, "checks": {"type": "object", "additionalProperties": {"type": "boolean"}}}
          }
        }
      }
    }
    """#.replacingOccurrences(of: "NEAR_PATTERN", with: nearPattern.replacingOccurrences(of: "\\", with: "\\\\"))
}
