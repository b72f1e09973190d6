import Foundation
import Shared

/// The feed's OpenAPI 3.1 document, served at `GET /openapi.json`: `paths` is made from `FeedAPI.routes`
/// (each route's operation, under its path and method), around the info and the shared components written
/// here. Parameter patterns and bounds are the ones the handlers enforce (a schemathesis run in tests/feed
/// checks that both agree and that no request gets a 5xx).
enum OpenAPIDocument {
    /// `near=LAT,LON`: the same pattern `QueryParameters.coordinate` requires.
    static let nearPattern = #"^-?(?:90(?:\.0+)?|[1-8]?[0-9](?:\.[0-9]+)?),-?(?:180(?:\.0+)?|(?:1[0-7][0-9]|[1-9]?[0-9])(?:\.[0-9]+)?)$"#
    /// Two corners of a box, `near`'s coordinate twice.
    static let bboxPattern = "^" + nearPattern.dropFirst().dropLast() + "," + nearPattern.dropFirst().dropLast() + "$"

    static let json: String = render(FeedAPI.routes)

    /// The stored response of `GET /openapi.json`.
    static let resource = RenderedResource(bytes: Array(json.utf8), contentType: MediaTypes.json, cacheControl: CachePolicy.document,
                                           compressor: GzipCompressor())

    static func render(_ routes: [FeedRoute]) -> String {
        var paths: [(path: String, operations: [String])] = []
        for route in routes {
            let operation = "\"\(route.method.rawValue.lowercased())\": \(route.operation)"
            if let index = paths.firstIndex(where: { $0.path == route.path }) {
                paths[index].operations.append(operation)
            } else {
                paths.append((route.path, [operation]))
            }
        }
        let rendered = paths.map { "    \"\($0.path)\": {\($0.operations.joined(separator: ", "))}" }.joined(separator: ",\n")
        return header + "\n  \"paths\": {\n" + rendered + "\n  },\n" + components
    }

    /// `text` as the inside of a JSON string (the pattern's backslashes doubled).
    static func jsonEscaped(_ text: String) -> String {
        text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
    }

    private static let header = #"""
    {
      "openapi": "3.1.0",
      "info": {
        "title": "iTour feed",
        "version": "1.0.0",
        "summary": "The phones' API: published tours and points of interest, nearby and search, the legacy iTour XML feeds, and tracking events.",
        "description": "Every GET answers with an ETag and Cache-Control, honours If-None-Match with 304, and sends gzip when the request accepts it. Errors are application/problem+json (RFC 9457). Only published content is visible: a tour when it is published, a POI when a published tour stops there."
      },
      "servers": [{"url": "/"}],
    """#

    private static let components = #"""
      "components": {
        "headers": {
          "ETag": {"required": true, "description": "Changes when the content does", "schema": {"type": "string"}},
          "CacheControl": {"required": true, "schema": {"type": "string"}},
          "RetryAfter": {"required": true, "description": "Seconds to wait before sending again", "schema": {"type": "string", "pattern": "^[0-9]+$"}},
          "ContentLanguage": {"description": "The language of the answer: one of SITE_LANGUAGES (DESIGN.md, Languages)", "schema": {"type": "string"}}
        },
        "parameters": {
          "TourId": {"name": "id", "in": "path", "required": true, "schema": {"type": "string", "format": "uuid"},
                     "example": "00000001-0000-4000-8000-000000000011", "description": "The demo content's Students Tour (Beta) in the example"},
          "PoiId": {"name": "id", "in": "path", "required": true, "schema": {"type": "string", "format": "uuid"},
                    "example": "00000002-0000-4000-8000-000000001014", "description": "The demo content's CIS Building in the example"},
          "Lang": {"name": "lang", "in": "query", "required": false, "schema": {"type": "string", "pattern": "^[A-Za-z]{2,8}(-[A-Za-z0-9]{1,8})*$", "maxLength": 35},
                   "example": "es", "description": "The answer's language, over Accept-Language; an unknown one gives the site's"},
          "AcceptLanguage": {"name": "Accept-Language", "in": "header", "required": false, "schema": {"type": "string"}, "example": "es-MX, en;q=0.5",
                             "description": "RFC 9110 q-values, matched by RFC 4647 lookup against the site's languages (es-MX finds es)"}
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
            "type": "object", "required": ["id", "name", "summary", "stopCount", "updatedAt", "legacyId", "color", "coverImage", "coverImageAlt", "estimatedMinutes"],
            "properties": {
              "color": {"type": ["string", "null"], "pattern": "^#[0-9a-f]{6}$", "description": "The colour to draw the tour in"},
              "coverImage": {"type": ["string", "null"], "description": "A picture for the tour's card"},
              "coverImageAlt": {"type": ["string", "null"], "description": "What the cover picture shows"},
              "estimatedMinutes": {"type": ["integer", "null"], "minimum": 1, "maximum": 1440, "description": "How long the walk takes"},
              "id": {"type": "string", "format": "uuid"},
              "name": {"type": "string"},
              "summary": {"type": "string"},
              "stopCount": {"type": "integer", "minimum": 0},
              "updatedAt": {"type": "string", "format": "date-time"},
              "legacyId": {"type": ["integer", "null"], "description": "The original iTour id, when the tour has one"},
              "languages": {"$ref": "#/components/schemas/Languages"}
            }
          },
          "Languages": {"type": "array", "items": {"type": "string"}, "description": "The languages it has text in, the site's first"},
          "TourList": {
            "type": "object", "required": ["tours"],
            "properties": {"language": {"type": "string"}, "tours": {"type": "array", "items": {"$ref": "#/components/schemas/TourSummary"}}}
          },
          "CategoryTree": {
            "type": "object", "required": ["categories", "language"],
            "properties": {"categories": {"type": "array", "items": {"$ref": "#/components/schemas/CategoryNode"}},
                           "language": {"type": "string", "description": "The language of the names", "example": "en"}}
          },
          "CategoryNode": {
            "type": "object", "required": ["path", "name", "poiCount", "children"],
            "properties": {
              "path": {"type": "string", "example": "Eat/Cafés"},
              "name": {"type": "string"},
              "poiCount": {"type": "integer", "minimum": 0, "description": "POIs on the feed in this category or below it, each once"},
              "children": {"type": "array", "items": {"$ref": "#/components/schemas/CategoryNode"}}
            }
          },
          "Stop": {
            "type": "object", "required": ["id", "name", "summary", "latitude", "longitude", "category", "triggerRadiusMeters"],
            "properties": {
              "languages": {"$ref": "#/components/schemas/Languages"},
              "triggerRadiusMeters": {"type": "integer", "minimum": 5, "maximum": 500, "description": "The stop's geofence for poi.arrived"},
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
            "required": ["id", "name", "summary", "purpose", "legacyId", "stopCount", "updatedAt", "version", "stops", "bbox", "walkingDistanceMeters",
                         "color", "coverImage", "coverImageAlt", "estimatedMinutes", "route"],
            "properties": {
              "language": {"type": "string", "description": "The answer's language"},
              "languages": {"$ref": "#/components/schemas/Languages"},
              "color": {"type": ["string", "null"], "pattern": "^#[0-9a-f]{6}$", "description": "The colour to draw the tour in"},
              "coverImage": {"type": ["string", "null"], "description": "A picture for the tour's card"},
              "coverImageAlt": {"type": ["string", "null"], "description": "What the cover picture shows"},
              "estimatedMinutes": {"type": ["integer", "null"], "minimum": 1, "maximum": 1440, "description": "How long the walk takes"},
              "route": {"oneOf": [{"$ref": "#/components/schemas/LineString"}, {"type": "null"}], "description": "The path walked, when the tour has one"},
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
              "walkingDistanceMeters": {"type": "number", "minimum": 0, "description": "Great-circle distance along the route, or along the stops in order without one"}
            }
          },
          "LineString": {
            "type": "object", "required": ["type", "coordinates"], "description": "GeoJSON (RFC 7946): positions [longitude, latitude]",
            "properties": {
              "type": {"const": "LineString"},
              "coordinates": {"type": "array", "minItems": 2, "items": {"type": "array", "minItems": 2, "maxItems": 2, "items": {"type": "number"}}}
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
            "required": ["id", "name", "summary", "description", "latitude", "longitude", "category", "categories", "buildings", "pictures", "links",
                         "address", "phone", "website", "openingHours", "tourIds", "legacyId", "updatedAt", "version",
                         "media", "narration", "pictureAlts", "triggerRadiusMeters"],
            "properties": {
              "language": {"type": "string", "description": "The answer's language"},
              "languages": {"$ref": "#/components/schemas/Languages"},
              "media": {"type": "array", "items": {"$ref": "#/components/schemas/PoiMediaFile"}, "description": "Each library file the POI uses, once"},
              "narration": {"oneOf": [{"$ref": "#/components/schemas/PoiMediaFile"}, {"type": "null"}], "description": "Audio to play on poi.arrived"},
              "pictureAlts": {"type": "array", "items": {"type": ["string", "null"]}, "description": "What each picture shows, parallel to pictures"},
              "triggerRadiusMeters": {"type": "integer", "minimum": 5, "maximum": 500, "description": "The geofence for poi.arrived"},
              "id": {"type": "string", "format": "uuid"},
              "name": {"type": "string"},
              "summary": {"type": "string"},
              "description": {"type": "string"},
              "latitude": {"type": "number", "minimum": -90, "maximum": 90},
              "longitude": {"type": "number", "minimum": -180, "maximum": 180},
              "category": {"type": ["string", "null"], "description": "The main category"},
              "categories": {"type": "array", "items": {"type": "string"}, "description": "Every category path, the main one first"},
              "buildings": {"type": "array", "items": {"type": "string"}},
              "pictures": {"type": "array", "items": {"type": "string"}},
              "links": {"type": "array", "items": {"$ref": "#/components/schemas/MediaLink"}},
              "address": {"type": ["string", "null"]},
              "phone": {"type": ["string", "null"]},
              "website": {"type": ["string", "null"]},
              "openingHours": {"type": ["string", "null"], "description": "OpenStreetMap opening_hours syntax (older content: free text)"},
              "openingHoursTable": {"type": "array", "description": "The week, when openingHours reads; spans empty: closed",
                "items": {"type": "object", "required": ["day", "name", "spans"],
                          "properties": {"day": {"enum": ["Mo", "Tu", "We", "Th", "Fr", "Sa", "Su", "PH"]}, "name": {"type": "string"},
                                         "spans": {"type": "array", "items": {"type": "string", "pattern": "^[0-2][0-9]:[0-5][0-9]-[0-2][0-9]:[0-5][0-9]$"}}}}},
              "priceLevel": {"type": ["integer", "null"], "minimum": 0, "maximum": 4},
              "accessibility": {"type": ["string", "null"]},
              "tourIds": {"type": "array", "items": {"type": "string", "format": "uuid"}, "description": "Published tours that stop here, by name"},
              "legacyId": {"type": ["integer", "null"]},
              "updatedAt": {"type": "string", "format": "date-time"},
              "version": {"type": "integer", "minimum": 1}
            }
          },
          "PoiMediaFile": {
            "type": "object", "required": ["url", "sha256", "type", "byteCount", "title", "altText", "width", "height", "captionsUrl", "transcript"],
            "properties": {
              "url": {"type": "string", "format": "uri"}, "sha256": {"type": "string", "pattern": "^[0-9a-f]{64}$"}, "type": {"type": "string"},
              "byteCount": {"type": "integer", "minimum": 1}, "title": {"type": "string"}, "altText": {"type": ["string", "null"]},
              "width": {"type": ["integer", "null"]}, "height": {"type": ["integer", "null"]},
              "captionsUrl": {"type": ["string", "null"], "format": "uri", "description": "WebVTT captions"},
              "transcript": {"type": ["string", "null"]}
            }
          },
          "TourBundle": {
            "type": "object", "required": ["tour", "pois", "pages", "media"],
            "properties": {
              "language": {"type": "string", "description": "The language of the tour, its POIs and their pages"},
              "tour": {"$ref": "#/components/schemas/Tour"},
              "pois": {"type": "array", "items": {"$ref": "#/components/schemas/Poi"}},
              "pages": {"type": "array", "items": {"type": "object", "required": ["poiId", "html"],
                        "properties": {"poiId": {"type": "string", "format": "uuid"}, "html": {"type": "string"}}}},
              "media": {"type": "array", "items": {"type": "object", "required": ["url", "sha256", "byteCount", "type"],
                        "properties": {"url": {"type": "string", "format": "uri"}, "sha256": {"type": "string", "pattern": "^[0-9a-f]{64}$"},
                                       "byteCount": {"type": "integer", "minimum": 0}, "type": {"type": "string"}}}}
            }
          },
          "PoiListing": {
            "type": "object", "required": ["id", "name", "summary", "latitude", "longitude", "category"],
            "properties": {
              "id": {"type": "string", "format": "uuid"}, "name": {"type": "string"},
              "summary": {"type": "string"}, "languages": {"$ref": "#/components/schemas/Languages"},
              "latitude": {"type": "number"}, "longitude": {"type": "number"},
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
            "properties": {"language": {"type": "string"}, "pois": {"type": "array", "items": {"$ref": "#/components/schemas/NearbyPoi"}}}
          },
          "PoiBrowseResult": {
            "type": "object", "required": ["pois"],
            "properties": {
              "language": {"type": "string"},
              "pois": {"type": "array", "items": {"$ref": "#/components/schemas/PoiListing"}},
              "nextCursor": {"type": "string", "description": "Absent on the last page"}
            }
          },
          "CalendarPlace": {
            "type": ["object", "null"], "required": ["name"],
            "properties": {"name": {"type": "string"}, "poiId": {"type": "string", "format": "uuid"}}
          },
          "CalendarOccurrences": {
            "type": "object", "required": ["from", "to", "occurrences"],
            "properties": {
              "from": {"type": "string", "format": "date"}, "to": {"type": "string", "format": "date", "description": "The last day the answer covers"},
              "occurrences": {"type": "array", "items": {
              "type": "object", "required": ["eventId", "title", "startsAt", "endsAt", "timeZone", "allDay", "place", "url", "registrationUrl"],
              "properties": {
                "eventId": {"type": "string", "format": "uuid"}, "title": {"type": "string"},
                "startsAt": {"type": "string", "description": "RFC 3339 with the event's offset; a date when allDay"},
                "endsAt": {"type": "string", "description": "RFC 3339; the last day, inclusive, when allDay"},
                "timeZone": {"type": "string"}, "allDay": {"type": "boolean"}, "place": {"$ref": "#/components/schemas/CalendarPlace"},
                "url": {"type": ["string", "null"]}, "registrationUrl": {"type": ["string", "null"]}
              }}}}
          },
          "CalendarEvent": {
            "type": "object", "required": ["id", "title", "startsAt", "endsAt", "timeZone", "allDay", "nextOccurrences", "version"],
            "properties": {
              "id": {"type": "string", "format": "uuid"}, "title": {"type": "string"}, "summary": {"type": "string"}, "description": {"type": "string"},
              "startsAt": {"type": "string"}, "endsAt": {"type": "string"}, "timeZone": {"type": "string"}, "allDay": {"type": "boolean"},
              "place": {"$ref": "#/components/schemas/CalendarPlace"}, "url": {"type": ["string", "null"]}, "registrationUrl": {"type": ["string", "null"]},
              "categories": {"type": "array", "items": {"type": "string"}}, "recurrence": {"type": ["object", "null"]},
              "exceptionDates": {"type": "array", "items": {"type": "string"}},
              "nextOccurrences": {"type": "array", "items": {"type": "object", "required": ["startsAt", "endsAt"],
                                                             "properties": {"startsAt": {"type": "string"}, "endsAt": {"type": "string"}}}},
              "updatedAt": {"type": "string", "format": "date-time"}, "version": {"type": "integer", "minimum": 1}
            }
          },
          "Person": {
            "type": "object", "required": ["id", "name", "role", "department", "email", "phone", "office", "interests", "profileUrl", "photoUrl"],
            "properties": {
              "id": {"type": "string", "format": "uuid"}, "name": {"type": "string"}, "role": {"type": "string"}, "department": {"type": "string"},
              "email": {"type": ["string", "null"]}, "phone": {"type": ["string", "null"]}, "office": {"$ref": "#/components/schemas/CalendarPlace"},
              "interests": {"type": "array", "items": {"type": "string"}}, "profileUrl": {"type": ["string", "null"]}, "photoUrl": {"type": ["string", "null"]},
              "updatedAt": {"type": "string", "format": "date-time"}, "version": {"type": "integer", "minimum": 1}
            }
          },
          "PeopleResult": {
            "type": "object", "required": ["people", "total"],
            "properties": {"people": {"type": "array", "items": {"$ref": "#/components/schemas/Person"}},
                           "total": {"type": "integer", "minimum": 0, "description": "Every match, beyond limit and offset"}}
          },
          "PageSummary": {
            "type": "object", "required": ["id", "slug", "title", "summary", "order", "updatedAt"],
            "properties": {"id": {"type": "string", "format": "uuid"}, "slug": {"type": "string"}, "title": {"type": "string"}, "summary": {"type": "string"}, "order": {"type": "integer"},
                           "updatedAt": {"type": "string", "format": "date-time"}}
          },
          "PageList": {"type": "object", "required": ["pages"], "properties": {"pages": {"type": "array", "items": {"$ref": "#/components/schemas/PageSummary"}}}},
          "Page": {
            "allOf": [{"$ref": "#/components/schemas/PageSummary"},
                      {"type": "object", "required": ["html", "version"], "properties": {"html": {"type": "string"}, "version": {"type": "integer", "minimum": 1}}}]
          },
          "FeaturedList": {
            "type": "object", "required": ["featured"],
            "properties": {"featured": {"type": "array", "items": {"$ref": "#/components/schemas/FeaturedItem"}}}
          },
          "FeaturedItem": {
            "type": "object", "required": ["kind", "id", "featuredId", "title", "summary", "imageUrl", "imageAlt", "order"],
            "properties": {"kind": {"enum": ["tour", "poi", "event", "page"]}, "id": {"type": "string", "format": "uuid", "description": "What it shows"},
                           "featuredId": {"type": "string", "format": "uuid", "description": "The item's own id"},
                           "slug": {"type": "string", "description": "A page's address"}, "title": {"type": "string"}, "summary": {"type": "string"},
                           "imageUrl": {"type": "string"}, "imageAlt": {"type": "string"}, "order": {"type": "integer"}}
          },
          "PoiQueryResult": {"anyOf": [{"$ref": "#/components/schemas/NearbyResult"}, {"$ref": "#/components/schemas/PoiBrowseResult"}]},
          "SearchResult": {
            "type": "object", "required": ["tours", "pois", "events", "people", "pages"],
            "properties": {
              "language": {"type": "string", "description": "The language of tours and POIs"},
              "tours": {"type": "array", "items": {"$ref": "#/components/schemas/TourSummary"}},
              "events": {"type": "array", "items": {"type": "object", "required": ["eventId", "title", "summary", "startsAt", "endsAt", "timeZone", "allDay"],
                "properties": {"eventId": {"type": "string", "format": "uuid"}, "title": {"type": "string"}, "summary": {"type": "string"},
                               "startsAt": {"type": "string"}, "endsAt": {"type": "string"}, "timeZone": {"type": "string"}, "allDay": {"type": "boolean"}}}},
              "pois": {"type": "array", "items": {"$ref": "#/components/schemas/PoiListing"}},
              "people": {"type": "array", "items": {"$ref": "#/components/schemas/Person"}},
              "pages": {"type": "array", "items": {"$ref": "#/components/schemas/PageSummary"}}
            }
          },
          "Changes": {
            "type": "object", "required": ["changes", "cursor", "reset"],
            "properties": {
              "changes": {"type": "array", "items": {"$ref": "#/components/schemas/Change"}},
              "cursor": {"type": "string", "pattern": "^[A-Za-z0-9_-]{11}$", "description": "Opaque; give it as since next time"},
              "reset": {"type": "boolean", "description": "True when changes lists everything on the feed: drop what is not listed"}
            }
          },
          "Change": {
            "type": "object", "required": ["deleted", "id", "kind", "version"],
            "properties": {
              "deleted": {"type": "boolean", "description": "Gone from the feed (deleted or unpublished)"},
              "href": {"type": "string", "pattern": "^/v1/", "description": "Where the feed answers it now, from the feed's root; absent when deleted"},
              "id": {"type": "string", "format": "uuid"},
              "kind": {"enum": ["tour", "poi", "page", "event", "person", "featured", "media"]},
              "version": {"type": "integer", "minimum": 0, "description": "Its version now, or that of the change that took it off the feed"}
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
              "type": {"enum": ["device.registered", "tour.started", "tour.completed", "poi.viewed", "poi.arrived", "poi.left", "media.played", "search.performed",
                                "event.viewed", "page.viewed", "person.viewed"]},
              "deviceId": {"type": "string", "minLength": 1, "maxLength": 128},
              "touristId": {"type": "string", "minLength": 1, "maxLength": 128},
              "occurredAt": {"type": "string", "format": "date-time"},
              "language": {"type": "string", "minLength": 2, "maxLength": 35, "description": "The app's language, a BCP 47 tag such as es or pt-BR (issue 45)"},
              "platform": {"type": "string", "description": "device.registered"},
              "osVersion": {"type": "string", "description": "device.registered"},
              "model": {"type": "string", "description": "device.registered"},
              "appVersion": {"type": "string", "description": "device.registered"},
              "tourId": {"type": "string", "format": "uuid", "description": "tour.started, tour.completed; optional for poi.viewed, poi.arrived, search.performed"},
              "poiId": {"type": "string", "format": "uuid", "description": "poi.viewed, poi.arrived, poi.left, media.played"},
              "durationSeconds": {"type": "number", "minimum": 0, "maximum": 604800, "description": "tour.completed"},
              "dwellSeconds": {"type": "number", "minimum": 0, "maximum": 604800, "description": "poi.left"},
              "via": {"enum": [\#(TrackingEvent.Via.allCases.map { "\"\($0.rawValue)\"" }.joined(separator: ", "))], "description": "poi.viewed (qr: opened from a printed code)"},
              "url": {"type": "string", "description": "media.played"},
              "mediaType": {"enum": ["page", "video", "audio", "image"], "description": "media.played"},
              "query": {"type": "string", "minLength": 1, "maxLength": 200, "description": "search.performed: what the visitor typed"},
              "resultCount": {"type": "integer", "minimum": 0, "maximum": 1000000000, "description": "search.performed: how many results it found"},
              "eventId": {"type": "string", "format": "uuid", "description": "event.viewed: the calendar event"},
              "pageId": {"type": "string", "format": "uuid", "description": "page.viewed"},
              "personId": {"type": "string", "format": "uuid", "description": "person.viewed"}
            }
          },
          "Readiness": {
            "type": "object", "required": ["ready", "checks"],
            "properties": {"ready": {"type": "boolean"}, "service": {"type": "string"}, "checks": {"type": "object", "additionalProperties": {"type": "boolean"}}}
          }
        }
      }
    }
    """#
}
