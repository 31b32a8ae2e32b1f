import Foundation

/// The OpenAPI 3.1 description of every `/api/v1` route, mobile and management (served at `/api/v1/openapi.json`).
///
/// Kept in the binary so a deployment needs nothing else. `__SERVER_URL__` becomes the server's public URL.
/// The shapes are those the handlers encode (`MobileAPI`, `CatalogSigner`, `ManageAPI`, `MediaController`,
/// `TusController`, `PublishingController`, `APIErrorBody`): when a handler's answer changes, change it here too.
/// `OpenAPITests` validates the document with `openapi-spec-validator` and checks that every `/api/v1` route of the
/// router is described; `Tests/e2e/test_api_schemathesis.py` runs schemathesis against a live server with it.
enum OpenAPIDocument {
    static func json(serverURL: String) -> String {
        template.replacingOccurrences(of: "__SERVER_URL__", with: serverURL)
    }

    static let template = #"""
        {
          "openapi": "3.1.0",
          "info": {
            "title": "Trail Companion API",
            "version": "1.0.0",
            "summary": "Published tour packages for the mobile apps, and the management API for rangers' tools.",
            "description": "All routes are under `/api/v1`. The mobile routes need no sign-in and only ever show published, visible packages (an unknown id is 404, an unpublished package 410). The management routes under `/manage` need `Authorization: Bearer <token>` (tokens are made in the control panel or with `trail-companion token create`) and carry the same permissions as the panel: an object the caller may not see is 404, one they may see but not change is 403. Any request with an unknown bearer token is answered 401, on every route. Errors are always JSON: `{\"error\": {\"code\", \"message\", \"fields\"?}}`."
          },
          "servers": [{"url": "__SERVER_URL__/api/v1"}],
          "tags": [
            {"name": "mobile", "description": "For the Android and iOS apps; no sign-in."},
            {"name": "tours", "description": "Tours and waypoints."},
            {"name": "media", "description": "Assets: upload and scan status."},
            {"name": "uploads", "description": "Resumable uploads (tus 1.0.0)."},
            {"name": "publishing", "description": "Review and release."}
          ],
          "paths": {
            "/sites": {
              "get": {
                "operationId": "listSites",
                "summary": "Sites (parks, districts) and how many packages each publishes",
                "tags": ["mobile"],
                "parameters": [{"$ref": "#/components/parameters/IfNoneMatch"}],
                "responses": {
                  "200": {
                    "description": "Every site.",
                    "content": {"application/json": {"schema": {"type": "array", "items": {"$ref": "#/components/schemas/Site"}}}},
                    "headers": {"ETag": {"$ref": "#/components/headers/ETag"}, "Cache-Control": {"$ref": "#/components/headers/CacheControl"}}
                  },
                  "304": {"$ref": "#/components/responses/NotModified"}
                }
              }
            },
            "/sites/{slug}/packages": {
              "get": {
                "operationId": "listSitePackages",
                "summary": "The published packages of one site",
                "tags": ["mobile"],
                "parameters": [{"$ref": "#/components/parameters/SiteSlug"}, {"$ref": "#/components/parameters/IfNoneMatch"}],
                "responses": {
                  "200": {
                    "description": "Published, visible packages only, latest version of each.",
                    "content": {"application/json": {"schema": {"type": "array", "items": {"$ref": "#/components/schemas/PackageSummary"}}}},
                    "headers": {"ETag": {"$ref": "#/components/headers/ETag"}, "Cache-Control": {"$ref": "#/components/headers/CacheControl"}}
                  },
                  "304": {"$ref": "#/components/responses/NotModified"},
                  "404": {"$ref": "#/components/responses/NotFound"}
                }
              }
            },
            "/packages/{id}": {
              "get": {
                "operationId": "getPackage",
                "summary": "Full metadata of a published package (latest version)",
                "tags": ["mobile"],
                "parameters": [{"$ref": "#/components/parameters/PackageId"}, {"$ref": "#/components/parameters/IfNoneMatch"}],
                "responses": {
                  "200": {
                    "description": "The list fields plus park, bounds, waypoint count, the manifest and its signature.",
                    "content": {"application/json": {"schema": {"$ref": "#/components/schemas/PackageDetail"}}},
                    "headers": {"ETag": {"$ref": "#/components/headers/ETag"}, "Cache-Control": {"$ref": "#/components/headers/CacheControl"}}
                  },
                  "304": {"$ref": "#/components/responses/NotModified"},
                  "404": {"$ref": "#/components/responses/NotFound"},
                  "410": {"$ref": "#/components/responses/Gone"}
                }
              }
            },
            "/packages/{id}/download": {
              "get": {
                "operationId": "downloadPackage",
                "summary": "Download the latest version",
                "tags": ["mobile"],
                "description": "The latest version's zip, streamed. `ETag` is the quoted SHA-256 of the file; `Cache-Control: no-cache` (revalidate). Resume with `Range` plus `If-Range: <ETag>`: if a newer version was released meanwhile the ETag no longer matches and the whole new file comes back (200), never a splice of two versions.",
                "parameters": [
                  {"$ref": "#/components/parameters/PackageId"},
                  {"$ref": "#/components/parameters/Range"},
                  {"$ref": "#/components/parameters/IfRange"},
                  {"$ref": "#/components/parameters/IfNoneMatch"}
                ],
                "responses": {
                  "200": {
                    "description": "The whole package (no `Range`, several ranges, an invalid range, or an `If-Range` that no longer matches).",
                    "headers": {
                      "ETag": {"$ref": "#/components/headers/ETag"},
                      "Package-Version": {"$ref": "#/components/headers/PackageVersion"},
                      "Accept-Ranges": {"$ref": "#/components/headers/AcceptRanges"},
                      "Content-Length": {"$ref": "#/components/headers/ContentLength"},
                      "Content-Disposition": {"$ref": "#/components/headers/ContentDisposition"},
                      "Cache-Control": {"$ref": "#/components/headers/CacheControl"}
                    },
                    "content": {"application/zip": {"schema": {"type": "string", "contentMediaType": "application/zip"}}}
                  },
                  "206": {
                    "description": "One byte range of the package.",
                    "headers": {
                      "ETag": {"$ref": "#/components/headers/ETag"},
                      "Package-Version": {"$ref": "#/components/headers/PackageVersion"},
                      "Accept-Ranges": {"$ref": "#/components/headers/AcceptRanges"},
                      "Content-Length": {"$ref": "#/components/headers/ContentLength"},
                      "Content-Disposition": {"$ref": "#/components/headers/ContentDisposition"},
                      "Cache-Control": {"$ref": "#/components/headers/CacheControl"},
                      "Content-Range": {"$ref": "#/components/headers/ContentRange"}
                    },
                    "content": {"application/zip": {"schema": {"type": "string", "contentMediaType": "application/zip"}}}
                  },
                  "304": {
                    "description": "`If-None-Match` names the current ETag.",
                    "headers": {"ETag": {"$ref": "#/components/headers/ETag"}, "Package-Version": {"$ref": "#/components/headers/PackageVersion"}}
                  },
                  "404": {"$ref": "#/components/responses/NotFound"},
                  "410": {"$ref": "#/components/responses/Gone"},
                  "416": {
                    "description": "The range starts at or past the end of the file.",
                    "headers": {"Content-Range": {"$ref": "#/components/headers/ContentRangeUnsatisfied"}},
                    "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
                  }
                }
              },
              "head": {
                "operationId": "downloadPackageHead",
                "summary": "Headers of: Download the latest version",
                "tags": ["mobile"],
                "description": "The latest version's zip, streamed. `ETag` is the quoted SHA-256 of the file; `Cache-Control: no-cache` (revalidate). Resume with `Range` plus `If-Range: <ETag>`: if a newer version was released meanwhile the ETag no longer matches and the whole new file comes back (200), never a splice of two versions.",
                "parameters": [
                  {"$ref": "#/components/parameters/PackageId"},
                  {"$ref": "#/components/parameters/Range"},
                  {"$ref": "#/components/parameters/IfRange"},
                  {"$ref": "#/components/parameters/IfNoneMatch"}
                ],
                "responses": {
                  "200": {
                    "description": "The whole package (no `Range`, several ranges, an invalid range, or an `If-Range` that no longer matches).",
                    "headers": {
                      "ETag": {"$ref": "#/components/headers/ETag"},
                      "Package-Version": {"$ref": "#/components/headers/PackageVersion"},
                      "Accept-Ranges": {"$ref": "#/components/headers/AcceptRanges"},
                      "Content-Length": {"$ref": "#/components/headers/ContentLength"},
                      "Content-Disposition": {"$ref": "#/components/headers/ContentDisposition"},
                      "Cache-Control": {"$ref": "#/components/headers/CacheControl"}
                    }
                  },
                  "206": {
                    "description": "One byte range of the package.",
                    "headers": {
                      "ETag": {"$ref": "#/components/headers/ETag"},
                      "Package-Version": {"$ref": "#/components/headers/PackageVersion"},
                      "Accept-Ranges": {"$ref": "#/components/headers/AcceptRanges"},
                      "Content-Length": {"$ref": "#/components/headers/ContentLength"},
                      "Content-Disposition": {"$ref": "#/components/headers/ContentDisposition"},
                      "Cache-Control": {"$ref": "#/components/headers/CacheControl"},
                      "Content-Range": {"$ref": "#/components/headers/ContentRange"}
                    }
                  },
                  "304": {
                    "description": "`If-None-Match` names the current ETag.",
                    "headers": {"ETag": {"$ref": "#/components/headers/ETag"}, "Package-Version": {"$ref": "#/components/headers/PackageVersion"}}
                  },
                  "404": {"description": "No such package (or version)."},
                  "410": {"description": "The package has been unpublished."},
                  "416": {
                    "description": "The range starts at or past the end of the file.",
                    "headers": {"Content-Range": {"$ref": "#/components/headers/ContentRangeUnsatisfied"}}
                  }
                }
              }
            },
            "/packages/{id}/versions/{version}/download": {
              "get": {
                "operationId": "downloadPackageVersion",
                "summary": "Download one version",
                "tags": ["mobile"],
                "description": "One released version's zip; immutable (`Cache-Control: public, max-age=31536000, immutable`).",
                "parameters": [
                  {"$ref": "#/components/parameters/PackageId"},
                  {"$ref": "#/components/parameters/PackageVersionNumber"},
                  {"$ref": "#/components/parameters/Range"},
                  {"$ref": "#/components/parameters/IfRange"},
                  {"$ref": "#/components/parameters/IfNoneMatch"}
                ],
                "responses": {
                  "200": {
                    "description": "The whole package (no `Range`, several ranges, an invalid range, or an `If-Range` that no longer matches).",
                    "headers": {
                      "ETag": {"$ref": "#/components/headers/ETag"},
                      "Package-Version": {"$ref": "#/components/headers/PackageVersion"},
                      "Accept-Ranges": {"$ref": "#/components/headers/AcceptRanges"},
                      "Content-Length": {"$ref": "#/components/headers/ContentLength"},
                      "Content-Disposition": {"$ref": "#/components/headers/ContentDisposition"},
                      "Cache-Control": {"$ref": "#/components/headers/CacheControl"}
                    },
                    "content": {"application/zip": {"schema": {"type": "string", "contentMediaType": "application/zip"}}}
                  },
                  "206": {
                    "description": "One byte range of the package.",
                    "headers": {
                      "ETag": {"$ref": "#/components/headers/ETag"},
                      "Package-Version": {"$ref": "#/components/headers/PackageVersion"},
                      "Accept-Ranges": {"$ref": "#/components/headers/AcceptRanges"},
                      "Content-Length": {"$ref": "#/components/headers/ContentLength"},
                      "Content-Disposition": {"$ref": "#/components/headers/ContentDisposition"},
                      "Cache-Control": {"$ref": "#/components/headers/CacheControl"},
                      "Content-Range": {"$ref": "#/components/headers/ContentRange"}
                    },
                    "content": {"application/zip": {"schema": {"type": "string", "contentMediaType": "application/zip"}}}
                  },
                  "304": {
                    "description": "`If-None-Match` names the current ETag.",
                    "headers": {"ETag": {"$ref": "#/components/headers/ETag"}, "Package-Version": {"$ref": "#/components/headers/PackageVersion"}}
                  },
                  "404": {"$ref": "#/components/responses/NotFound"},
                  "410": {"$ref": "#/components/responses/Gone"},
                  "416": {
                    "description": "The range starts at or past the end of the file.",
                    "headers": {"Content-Range": {"$ref": "#/components/headers/ContentRangeUnsatisfied"}},
                    "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
                  }
                }
              },
              "head": {
                "operationId": "downloadPackageVersionHead",
                "summary": "Headers of: Download one version",
                "tags": ["mobile"],
                "description": "One released version's zip; immutable (`Cache-Control: public, max-age=31536000, immutable`).",
                "parameters": [
                  {"$ref": "#/components/parameters/PackageId"},
                  {"$ref": "#/components/parameters/PackageVersionNumber"},
                  {"$ref": "#/components/parameters/Range"},
                  {"$ref": "#/components/parameters/IfRange"},
                  {"$ref": "#/components/parameters/IfNoneMatch"}
                ],
                "responses": {
                  "200": {
                    "description": "The whole package (no `Range`, several ranges, an invalid range, or an `If-Range` that no longer matches).",
                    "headers": {
                      "ETag": {"$ref": "#/components/headers/ETag"},
                      "Package-Version": {"$ref": "#/components/headers/PackageVersion"},
                      "Accept-Ranges": {"$ref": "#/components/headers/AcceptRanges"},
                      "Content-Length": {"$ref": "#/components/headers/ContentLength"},
                      "Content-Disposition": {"$ref": "#/components/headers/ContentDisposition"},
                      "Cache-Control": {"$ref": "#/components/headers/CacheControl"}
                    }
                  },
                  "206": {
                    "description": "One byte range of the package.",
                    "headers": {
                      "ETag": {"$ref": "#/components/headers/ETag"},
                      "Package-Version": {"$ref": "#/components/headers/PackageVersion"},
                      "Accept-Ranges": {"$ref": "#/components/headers/AcceptRanges"},
                      "Content-Length": {"$ref": "#/components/headers/ContentLength"},
                      "Content-Disposition": {"$ref": "#/components/headers/ContentDisposition"},
                      "Cache-Control": {"$ref": "#/components/headers/CacheControl"},
                      "Content-Range": {"$ref": "#/components/headers/ContentRange"}
                    }
                  },
                  "304": {
                    "description": "`If-None-Match` names the current ETag.",
                    "headers": {"ETag": {"$ref": "#/components/headers/ETag"}, "Package-Version": {"$ref": "#/components/headers/PackageVersion"}}
                  },
                  "404": {"description": "No such package (or version)."},
                  "410": {"description": "The package has been unpublished."},
                  "416": {
                    "description": "The range starts at or past the end of the file.",
                    "headers": {"Content-Range": {"$ref": "#/components/headers/ContentRangeUnsatisfied"}}
                  }
                }
              }
            },
            "/packages/{id}/hash": {
              "get": {
                "operationId": "getPackageHash",
                "summary": "SHA-256, version and size of the latest version",
                "tags": ["mobile"],
                "parameters": [{"$ref": "#/components/parameters/PackageId"}],
                "responses": {
                  "200": {
                    "description": "What a complete download of the latest version hashes to.",
                    "content": {"application/json": {"schema": {"$ref": "#/components/schemas/PackageHash"}}}
                  },
                  "404": {"$ref": "#/components/responses/NotFound"},
                  "410": {"$ref": "#/components/responses/Gone"}
                }
              }
            },
            "/packages/{id}/verify": {
              "post": {
                "operationId": "verifyPackage",
                "summary": "Report a finished download and learn whether it is intact",
                "tags": ["mobile"],
                "parameters": [{"$ref": "#/components/parameters/PackageId"}],
                "requestBody": {"required": true, "content": {"application/json": {"schema": {"$ref": "#/components/schemas/VerifyRequest"}}}},
                "responses": {
                  "200": {
                    "description": "`valid` is true when the version exists and the SHA-256 matches it (and the verified download is counted); `expected` is that version (or the latest one when the version is unknown).",
                    "content": {"application/json": {"schema": {"$ref": "#/components/schemas/VerifyResult"}}}
                  },
                  "400": {"$ref": "#/components/responses/BadRequest"},
                  "404": {"$ref": "#/components/responses/NotFound"},
                  "410": {"$ref": "#/components/responses/Gone"},
                  "413": {"$ref": "#/components/responses/ContentTooLarge"},
                  "415": {"$ref": "#/components/responses/UnsupportedMediaType"}
                }
              }
            },
            "/signing-key": {
              "get": {
                "operationId": "getSigningKey",
                "summary": "The Ed25519 public key that signs manifests and the catalog",
                "tags": ["mobile"],
                "parameters": [{"$ref": "#/components/parameters/IfNoneMatch"}],
                "responses": {
                  "200": {
                    "description": "Pin this key in the app.",
                    "content": {"application/json": {"schema": {"$ref": "#/components/schemas/SigningKey"}}},
                    "headers": {"ETag": {"$ref": "#/components/headers/ETag"}, "Cache-Control": {"$ref": "#/components/headers/CacheControl"}}
                  },
                  "304": {"$ref": "#/components/responses/NotModified"}
                }
              }
            },
            "/catalog": {
              "get": {
                "operationId": "getCatalog",
                "summary": "Signed index of every published package",
                "tags": ["mobile"],
                "parameters": [{"$ref": "#/components/parameters/IfNoneMatch"}],
                "responses": {
                  "200": {
                    "description": "Verify `Catalog-Signature` over the exact body bytes before trusting them; refuse a `catalogVersion` older than the last one seen and a catalog past `expiresAt`.",
                    "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Catalog"}}},
                    "headers": {
                      "Catalog-Signature": {"$ref": "#/components/headers/CatalogSignature"},
                      "ETag": {"$ref": "#/components/headers/ETag"},
                      "Cache-Control": {"$ref": "#/components/headers/CacheControl"}
                    }
                  },
                  "304": {
                    "description": "`If-None-Match` names the current ETag.",
                    "headers": {"Catalog-Signature": {"$ref": "#/components/headers/CatalogSignature"}, "ETag": {"$ref": "#/components/headers/ETag"}}
                  }
                }
              }
            },
            "/openapi.json": {
              "get": {
                "operationId": "getOpenAPIDocument",
                "summary": "This document",
                "tags": ["mobile"],
                "responses": {
                  "200": {
                    "description": "The OpenAPI 3.1 description of every `/api/v1` route.",
                    "content": {
                      "application/json": {
                        "schema": {
                          "type": "object",
                          "required": ["openapi", "info", "paths"],
                          "properties": {"openapi": {"type": "string", "const": "3.1.0"}}
                        }
                      }
                    }
                  }
                }
              }
            },
            "/manage/tours": {
              "post": {
                "operationId": "createTour",
                "summary": "Create a tour",
                "tags": ["tours"],
                "description": "Authors and managers of the site (and admins). An unknown site, or one the caller may not see, is 404.",
                "requestBody": {"required": true, "content": {"application/json": {"schema": {"$ref": "#/components/schemas/TourCreate"}}}},
                "responses": {
                  "201": {"description": "The new draft tour.", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Tour"}}}},
                  "400": {"$ref": "#/components/responses/BadRequest"},
                  "401": {"$ref": "#/components/responses/Unauthorized"},
                  "403": {"$ref": "#/components/responses/Forbidden"},
                  "404": {"$ref": "#/components/responses/NotFound"},
                  "413": {"$ref": "#/components/responses/ContentTooLarge"},
                  "415": {"$ref": "#/components/responses/UnsupportedMediaType"},
                  "422": {"$ref": "#/components/responses/ValidationFailed"}
                },
                "security": [{"bearerAuth": []}]
              },
              "get": {
                "operationId": "listTours",
                "summary": "The tours of one site",
                "tags": ["tours"],
                "parameters": [{"name": "site", "in": "query", "required": true, "description": "The site's slug.", "schema": {"type": "string"}}],
                "responses": {
                  "200": {
                    "description": "Every tour of the site, with its waypoints.",
                    "content": {"application/json": {"schema": {"type": "array", "items": {"$ref": "#/components/schemas/Tour"}}}}
                  },
                  "400": {"$ref": "#/components/responses/BadRequest"},
                  "401": {"$ref": "#/components/responses/Unauthorized"},
                  "404": {"$ref": "#/components/responses/NotFound"}
                },
                "security": [{"bearerAuth": []}]
              }
            },
            "/manage/tours/{id}": {
              "get": {
                "operationId": "getTour",
                "summary": "Read a tour",
                "tags": ["tours"],
                "parameters": [{"$ref": "#/components/parameters/TourId"}],
                "responses": {
                  "200": {
                    "description": "The tour and its waypoints.",
                    "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Tour"}}}
                  },
                  "401": {"$ref": "#/components/responses/Unauthorized"},
                  "404": {"$ref": "#/components/responses/NotFound"}
                },
                "security": [{"bearerAuth": []}]
              },
              "patch": {
                "operationId": "updateTour",
                "summary": "Edit a tour: details, frame, zoom range",
                "tags": ["tours"],
                "description": "Only the keys sent change. One transaction: a PATCH refused in part changes nothing (422 with `fields`). A tour is locked (409) while its publish request is open.",
                "parameters": [{"$ref": "#/components/parameters/TourId"}],
                "requestBody": {"required": true, "content": {"application/json": {"schema": {"$ref": "#/components/schemas/TourPatch"}}}},
                "responses": {
                  "200": {"description": "The tour as saved.", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Tour"}}}},
                  "400": {"$ref": "#/components/responses/BadRequest"},
                  "401": {"$ref": "#/components/responses/Unauthorized"},
                  "403": {"$ref": "#/components/responses/Forbidden"},
                  "404": {"$ref": "#/components/responses/NotFound"},
                  "409": {"$ref": "#/components/responses/Conflict"},
                  "413": {"$ref": "#/components/responses/ContentTooLarge"},
                  "415": {"$ref": "#/components/responses/UnsupportedMediaType"},
                  "422": {"$ref": "#/components/responses/ValidationFailed"}
                },
                "security": [{"bearerAuth": []}]
              },
              "delete": {
                "operationId": "deleteTour",
                "summary": "Delete a tour",
                "tags": ["tours"],
                "parameters": [{"$ref": "#/components/parameters/TourId"}],
                "responses": {
                  "204": {"description": "Deleted, with its waypoints and assets."},
                  "401": {"$ref": "#/components/responses/Unauthorized"},
                  "403": {"$ref": "#/components/responses/Forbidden"},
                  "404": {"$ref": "#/components/responses/NotFound"},
                  "409": {"$ref": "#/components/responses/Conflict"}
                },
                "security": [{"bearerAuth": []}]
              }
            },
            "/manage/tours/{id}/waypoints": {
              "post": {
                "operationId": "createWaypoint",
                "summary": "Add a waypoint",
                "tags": ["tours"],
                "description": "The place must lie inside the tour's frame; the name is unique within the tour; `order` (1 … count + 1) inserts it there, otherwise it goes last.",
                "parameters": [{"$ref": "#/components/parameters/TourId"}],
                "requestBody": {"required": true, "content": {"application/json": {"schema": {"$ref": "#/components/schemas/WaypointCreate"}}}},
                "responses": {
                  "201": {
                    "description": "The new waypoint.",
                    "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Waypoint"}}}
                  },
                  "400": {"$ref": "#/components/responses/BadRequest"},
                  "401": {"$ref": "#/components/responses/Unauthorized"},
                  "403": {"$ref": "#/components/responses/Forbidden"},
                  "404": {"$ref": "#/components/responses/NotFound"},
                  "409": {"$ref": "#/components/responses/Conflict"},
                  "413": {"$ref": "#/components/responses/ContentTooLarge"},
                  "415": {"$ref": "#/components/responses/UnsupportedMediaType"},
                  "422": {"$ref": "#/components/responses/ValidationFailed"}
                },
                "security": [{"bearerAuth": []}]
              }
            },
            "/manage/tours/{id}/waypoints/{wid}": {
              "patch": {
                "operationId": "updateWaypoint",
                "summary": "Edit a waypoint",
                "tags": ["tours"],
                "parameters": [{"$ref": "#/components/parameters/TourId"}, {"$ref": "#/components/parameters/WaypointId"}],
                "requestBody": {"required": true, "content": {"application/json": {"schema": {"$ref": "#/components/schemas/WaypointPatch"}}}},
                "responses": {
                  "200": {
                    "description": "The waypoint as saved.",
                    "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Waypoint"}}}
                  },
                  "400": {"$ref": "#/components/responses/BadRequest"},
                  "401": {"$ref": "#/components/responses/Unauthorized"},
                  "403": {"$ref": "#/components/responses/Forbidden"},
                  "404": {"$ref": "#/components/responses/NotFound"},
                  "409": {"$ref": "#/components/responses/Conflict"},
                  "413": {"$ref": "#/components/responses/ContentTooLarge"},
                  "415": {"$ref": "#/components/responses/UnsupportedMediaType"},
                  "422": {"$ref": "#/components/responses/ValidationFailed"}
                },
                "security": [{"bearerAuth": []}]
              },
              "delete": {
                "operationId": "deleteWaypoint",
                "summary": "Delete a waypoint",
                "tags": ["tours"],
                "parameters": [{"$ref": "#/components/parameters/TourId"}, {"$ref": "#/components/parameters/WaypointId"}],
                "responses": {
                  "204": {"description": "Deleted; the others are renumbered."},
                  "401": {"$ref": "#/components/responses/Unauthorized"},
                  "403": {"$ref": "#/components/responses/Forbidden"},
                  "404": {"$ref": "#/components/responses/NotFound"},
                  "409": {"$ref": "#/components/responses/Conflict"}
                },
                "security": [{"bearerAuth": []}]
              }
            },
            "/manage/tours/{id}/export.geojson": {
              "get": {
                "operationId": "exportTourGeoJSON",
                "summary": "The tour as GeoJSON",
                "tags": ["tours"],
                "parameters": [{"$ref": "#/components/parameters/TourId"}],
                "responses": {
                  "200": {
                    "description": "An RFC 7946 FeatureCollection: the waypoints (Points, in order), the frame (a Polygon) and the route (a LineString) when there is one.",
                    "headers": {"Content-Disposition": {"$ref": "#/components/headers/GeoJSONDisposition"}},
                    "content": {"application/geo+json": {"schema": {"$ref": "#/components/schemas/GeoJSONFeatureCollection"}}}
                  },
                  "401": {"$ref": "#/components/responses/Unauthorized"},
                  "404": {"$ref": "#/components/responses/NotFound"}
                },
                "security": [{"bearerAuth": []}]
              }
            },
            "/manage/tours/{id}/import": {
              "post": {
                "operationId": "importTour",
                "summary": "Import waypoints (and a route) from GeoJSON or GPX",
                "tags": ["tours"],
                "description": "Waypoints are matched by name: new ones are added, moved or edited ones changed, the rest skipped (with a reason). A file that cannot be read is 422 with `fields.file` naming the feature or line at fault.",
                "parameters": [
                  {"$ref": "#/components/parameters/TourId"},
                  {
                    "name": "dryRun",
                    "in": "query",
                    "required": false,
                    "schema": {"type": "boolean", "default": false},
                    "description": "Only answer what would change."
                  }
                ],
                "requestBody": {
                  "required": true,
                  "content": {
                    "multipart/form-data": {
                      "schema": {"$ref": "#/components/schemas/ImportUpload"},
                      "encoding": {"file": {"contentType": "application/octet-stream"}}
                    }
                  }
                },
                "responses": {
                  "200": {
                    "description": "What the import changes (`dryRun=true`) or changed.",
                    "content": {"application/json": {"schema": {"$ref": "#/components/schemas/ImportResult"}}}
                  },
                  "400": {"$ref": "#/components/responses/BadRequest"},
                  "401": {"$ref": "#/components/responses/Unauthorized"},
                  "403": {"$ref": "#/components/responses/Forbidden"},
                  "404": {"$ref": "#/components/responses/NotFound"},
                  "409": {"$ref": "#/components/responses/Conflict"},
                  "413": {"$ref": "#/components/responses/ContentTooLarge"},
                  "415": {"$ref": "#/components/responses/UnsupportedMediaType"},
                  "422": {"$ref": "#/components/responses/ValidationFailed"}
                },
                "security": [{"bearerAuth": []}]
              }
            },
            "/manage/tours/{id}/tiles": {
              "post": {
                "operationId": "uploadTiles",
                "summary": "Upload the tour's offline map tiles (MBTiles)",
                "tags": ["tours"],
                "description": "One multipart field `file`: an MBTiles 1.3 file of raster tiles (PNG, JPEG or WebP) overlapping the tour's frame (422 without a frame or for a file that is not such an MBTiles file; 415 when it is not SQLite at all).",
                "parameters": [{"$ref": "#/components/parameters/TourId"}],
                "requestBody": {
                  "required": true,
                  "content": {
                    "multipart/form-data": {
                      "schema": {"$ref": "#/components/schemas/TilesUpload"},
                      "encoding": {"file": {"contentType": "application/octet-stream"}}
                    }
                  }
                },
                "responses": {
                  "201": {
                    "description": "The tileset, `pending` until the malware scan ends; it replaces any earlier one.",
                    "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Tileset"}}},
                    "headers": {"Location": {"$ref": "#/components/headers/TilesetLocation"}}
                  },
                  "400": {"$ref": "#/components/responses/BadRequest"},
                  "401": {"$ref": "#/components/responses/Unauthorized"},
                  "403": {"$ref": "#/components/responses/Forbidden"},
                  "404": {"$ref": "#/components/responses/NotFound"},
                  "409": {"$ref": "#/components/responses/Conflict"},
                  "413": {"$ref": "#/components/responses/ContentTooLarge"},
                  "415": {"$ref": "#/components/responses/UnsupportedMediaType"},
                  "422": {"$ref": "#/components/responses/ValidationFailed"}
                },
                "security": [{"bearerAuth": []}]
              },
              "get": {
                "operationId": "getTiles",
                "summary": "The tour's uploaded tileset",
                "tags": ["tours"],
                "description": "404 when the tour has no uploaded tiles.",
                "parameters": [{"$ref": "#/components/parameters/TourId"}],
                "responses": {
                  "200": {
                    "description": "The tileset and its scan status.",
                    "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Tileset"}}}
                  },
                  "401": {"$ref": "#/components/responses/Unauthorized"},
                  "404": {"$ref": "#/components/responses/NotFound"}
                },
                "security": [{"bearerAuth": []}]
              },
              "delete": {
                "operationId": "deleteTiles",
                "summary": "Remove the tour's uploaded tiles",
                "tags": ["tours"],
                "parameters": [{"$ref": "#/components/parameters/TourId"}],
                "responses": {
                  "204": {"description": "Removed; packages use the tile server again."},
                  "401": {"$ref": "#/components/responses/Unauthorized"},
                  "403": {"$ref": "#/components/responses/Forbidden"},
                  "404": {"$ref": "#/components/responses/NotFound"},
                  "409": {"$ref": "#/components/responses/Conflict"}
                },
                "security": [{"bearerAuth": []}]
              }
            },
            "/manage/tours/{id}/waypoints/{wid}/assets": {
              "post": {
                "operationId": "uploadAsset",
                "summary": "Upload one file to a waypoint",
                "tags": ["media"],
                "description": "Streamed to disk. The type comes from the bytes (415 for anything but the accepted video, audio, image and text formats); the file name is kept as metadata only. For large files prefer the resumable tus endpoint.",
                "parameters": [{"$ref": "#/components/parameters/TourId"}, {"$ref": "#/components/parameters/WaypointId"}],
                "requestBody": {
                  "required": true,
                  "content": {
                    "multipart/form-data": {
                      "schema": {"$ref": "#/components/schemas/AssetUpload"},
                      "encoding": {"file": {"contentType": "application/octet-stream"}}
                    }
                  }
                },
                "responses": {
                  "201": {
                    "description": "The asset, `pending` until the malware scan ends.",
                    "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Asset"}}},
                    "headers": {"Location": {"$ref": "#/components/headers/AssetLocation"}}
                  },
                  "400": {"$ref": "#/components/responses/BadRequest"},
                  "401": {"$ref": "#/components/responses/Unauthorized"},
                  "403": {"$ref": "#/components/responses/Forbidden"},
                  "404": {"$ref": "#/components/responses/NotFound"},
                  "409": {"$ref": "#/components/responses/Conflict"},
                  "413": {"$ref": "#/components/responses/ContentTooLarge"},
                  "415": {"$ref": "#/components/responses/UnsupportedMediaType"},
                  "422": {"$ref": "#/components/responses/ValidationFailed"}
                },
                "security": [{"bearerAuth": []}]
              }
            },
            "/manage/assets/{aid}": {
              "get": {
                "operationId": "getAsset",
                "summary": "An asset and its scan status",
                "tags": ["media"],
                "parameters": [{"$ref": "#/components/parameters/AssetId"}],
                "responses": {
                  "200": {"description": "The asset.", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Asset"}}}},
                  "401": {"$ref": "#/components/responses/Unauthorized"},
                  "404": {"$ref": "#/components/responses/NotFound"}
                },
                "security": [{"bearerAuth": []}]
              }
            },
            "/manage/uploads": {
              "options": {
                "operationId": "tusOptions",
                "summary": "tus discovery",
                "tags": ["uploads"],
                "description": "Needs no token.",
                "responses": {
                  "204": {
                    "description": "What this tus server supports.",
                    "headers": {
                      "Tus-Resumable": {"$ref": "#/components/headers/TusResumable"},
                      "Tus-Version": {"$ref": "#/components/headers/TusVersion"},
                      "Tus-Extension": {"$ref": "#/components/headers/TusExtension"},
                      "Tus-Max-Size": {"$ref": "#/components/headers/TusMaxSize"},
                      "Tus-Checksum-Algorithm": {"$ref": "#/components/headers/TusChecksumAlgorithm"}
                    }
                  }
                },
                "security": []
              },
              "post": {
                "operationId": "tusCreate",
                "summary": "Create a resumable upload",
                "tags": ["uploads"],
                "description": "tus 1.0.0 (core, creation, termination, expiration, checksum). `Upload-Metadata` carries base64 values for `tour` and `waypoint` (ids, required), `filename` and `replaces` (an asset id of the same waypoint). When the last byte arrives the upload becomes a pending asset: the final PATCH answers `Asset-Id` and `Asset-Location`.",
                "parameters": [
                  {"$ref": "#/components/parameters/TusResumable"},
                  {"$ref": "#/components/parameters/UploadLengthHeader"},
                  {"$ref": "#/components/parameters/UploadMetadataHeader"}
                ],
                "responses": {
                  "201": {
                    "description": "Created; PATCH the bytes to `Location`.",
                    "headers": {
                      "Tus-Resumable": {"$ref": "#/components/headers/TusResumable"},
                      "Location": {"$ref": "#/components/headers/UploadLocation"},
                      "Upload-Expires": {"$ref": "#/components/headers/UploadExpires"}
                    }
                  },
                  "400": {"$ref": "#/components/responses/TusBadRequest"},
                  "401": {"$ref": "#/components/responses/TusUnauthorized"},
                  "403": {"$ref": "#/components/responses/TusForbidden"},
                  "404": {"$ref": "#/components/responses/TusNotFound"},
                  "412": {"$ref": "#/components/responses/TusPreconditionFailed"},
                  "413": {"$ref": "#/components/responses/TusContentTooLarge"}
                },
                "security": [{"bearerAuth": []}]
              }
            },
            "/manage/uploads/{uploadId}": {
              "head": {
                "operationId": "tusHead",
                "summary": "Offset of an upload (to resume)",
                "tags": ["uploads"],
                "parameters": [{"$ref": "#/components/parameters/UploadId"}, {"$ref": "#/components/parameters/TusResumable"}],
                "responses": {
                  "200": {
                    "description": "How many bytes the server has.",
                    "headers": {
                      "Tus-Resumable": {"$ref": "#/components/headers/TusResumable"},
                      "Upload-Offset": {"$ref": "#/components/headers/UploadOffset"},
                      "Upload-Length": {"$ref": "#/components/headers/UploadLength"},
                      "Upload-Expires": {"$ref": "#/components/headers/UploadExpires"},
                      "Cache-Control": {"$ref": "#/components/headers/CacheControl"}
                    }
                  },
                  "401": {"description": "No valid bearer token.", "headers": {"Tus-Resumable": {"$ref": "#/components/headers/TusResumable"}}},
                  "404": {
                    "description": "No such upload of this user (finished, cancelled, or expired and removed).",
                    "headers": {"Tus-Resumable": {"$ref": "#/components/headers/TusResumable"}}
                  },
                  "410": {"description": "The upload expired.", "headers": {"Tus-Resumable": {"$ref": "#/components/headers/TusResumable"}}},
                  "412": {
                    "description": "`Tus-Resumable` is missing or not 1.0.0.",
                    "headers": {
                      "Tus-Resumable": {"$ref": "#/components/headers/TusResumable"},
                      "Tus-Version": {"$ref": "#/components/headers/TusVersion"}
                    }
                  }
                },
                "security": [{"bearerAuth": []}]
              },
              "patch": {
                "operationId": "tusPatch",
                "summary": "Append bytes at `Upload-Offset`",
                "tags": ["uploads"],
                "description": "A refused PATCH (wrong offset, too many bytes, checksum mismatch) keeps nothing of its body; a dropped connection keeps every byte written. After the last byte: 415 or 422 when the file is not an accepted type or is empty, 409 when the tour was locked meanwhile.",
                "parameters": [
                  {"$ref": "#/components/parameters/UploadId"},
                  {"$ref": "#/components/parameters/TusResumable"},
                  {"$ref": "#/components/parameters/UploadOffsetHeader"},
                  {"$ref": "#/components/parameters/UploadChecksumHeader"}
                ],
                "requestBody": {
                  "required": true,
                  "content": {"application/offset+octet-stream": {"schema": {"type": "string", "contentMediaType": "application/octet-stream"}}}
                },
                "responses": {
                  "204": {
                    "description": "Stored. On the last byte the upload became an asset (`Asset-Id`, `Asset-Location`).",
                    "headers": {
                      "Tus-Resumable": {"$ref": "#/components/headers/TusResumable"},
                      "Upload-Offset": {"$ref": "#/components/headers/UploadOffset"},
                      "Upload-Expires": {"$ref": "#/components/headers/UploadExpires"},
                      "Asset-Id": {"$ref": "#/components/headers/AssetIdHeader"},
                      "Asset-Location": {"$ref": "#/components/headers/AssetLocationHeader"}
                    }
                  },
                  "400": {"$ref": "#/components/responses/TusBadRequest"},
                  "401": {"$ref": "#/components/responses/TusUnauthorized"},
                  "404": {"$ref": "#/components/responses/TusNotFound"},
                  "409": {"$ref": "#/components/responses/TusConflict"},
                  "410": {"$ref": "#/components/responses/TusGone"},
                  "412": {"$ref": "#/components/responses/TusPreconditionFailed"},
                  "413": {"$ref": "#/components/responses/TusContentTooLarge"},
                  "415": {"$ref": "#/components/responses/TusUnsupportedMediaType"},
                  "422": {"$ref": "#/components/responses/TusValidationFailed"},
                  "460": {"$ref": "#/components/responses/TusChecksumMismatch"}
                },
                "security": [{"bearerAuth": []}]
              },
              "delete": {
                "operationId": "tusDelete",
                "summary": "Cancel an upload",
                "tags": ["uploads"],
                "parameters": [{"$ref": "#/components/parameters/UploadId"}, {"$ref": "#/components/parameters/TusResumable"}],
                "responses": {
                  "204": {"description": "Cancelled and removed.", "headers": {"Tus-Resumable": {"$ref": "#/components/headers/TusResumable"}}},
                  "401": {"$ref": "#/components/responses/TusUnauthorized"},
                  "404": {"$ref": "#/components/responses/TusNotFound"},
                  "409": {"$ref": "#/components/responses/TusConflict"},
                  "412": {"$ref": "#/components/responses/TusPreconditionFailed"}
                },
                "security": [{"bearerAuth": []}]
              }
            },
            "/manage/tours/{id}/publish": {
              "post": {
                "operationId": "startPublish",
                "summary": "Submit a tour for review (startPublish)",
                "tags": ["publishing"],
                "description": "Author or manager. Validates the tour (frame set, at least one waypoint, all inside the frame, every asset clean), freezes a snapshot and locks the tour until the request ends.",
                "parameters": [{"$ref": "#/components/parameters/TourId"}],
                "responses": {
                  "202": {
                    "description": "Accepted: the package is being built in the background; follow `Location`.",
                    "content": {"application/json": {"schema": {"$ref": "#/components/schemas/PublishAccepted"}}},
                    "headers": {"Location": {"$ref": "#/components/headers/PublishRequestLocation"}}
                  },
                  "401": {"$ref": "#/components/responses/Unauthorized"},
                  "403": {"$ref": "#/components/responses/Forbidden"},
                  "404": {"$ref": "#/components/responses/NotFound"},
                  "409": {"$ref": "#/components/responses/Conflict"},
                  "422": {
                    "description": "The tour is not ready (code `not_ready`): `fields` holds the checklist, `checklist.1`, `checklist.2`, …",
                    "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
                  }
                },
                "security": [{"bearerAuth": []}]
              }
            },
            "/manage/publish-requests/{rid}": {
              "get": {
                "operationId": "getPublishRequest",
                "summary": "A publish request: state, build progress, reviews",
                "tags": ["publishing"],
                "parameters": [{"$ref": "#/components/parameters/RequestId"}],
                "responses": {
                  "200": {
                    "description": "The request.",
                    "content": {"application/json": {"schema": {"$ref": "#/components/schemas/PublishRequest"}}}
                  },
                  "401": {"$ref": "#/components/responses/Unauthorized"},
                  "404": {"$ref": "#/components/responses/NotFound"}
                },
                "security": [{"bearerAuth": []}]
              }
            },
            "/manage/publish-requests/{rid}/approve": {
              "post": {
                "operationId": "approvePublishRequest",
                "summary": "Approve (approvePublish)",
                "tags": ["publishing"],
                "description": "A reviewer or manager of the site who is not the request's author, once. The body is optional.",
                "parameters": [{"$ref": "#/components/parameters/RequestId"}],
                "requestBody": {"required": false, "content": {"application/json": {"schema": {"$ref": "#/components/schemas/ReviewComment"}}}},
                "responses": {
                  "200": {
                    "description": "The request after the approval (`ready` once it has enough).",
                    "content": {"application/json": {"schema": {"$ref": "#/components/schemas/PublishRequest"}}}
                  },
                  "400": {"$ref": "#/components/responses/BadRequest"},
                  "401": {"$ref": "#/components/responses/Unauthorized"},
                  "403": {"$ref": "#/components/responses/Forbidden"},
                  "404": {"$ref": "#/components/responses/NotFound"},
                  "409": {"$ref": "#/components/responses/Conflict"},
                  "413": {"$ref": "#/components/responses/ContentTooLarge"},
                  "415": {"$ref": "#/components/responses/UnsupportedMediaType"}
                },
                "security": [{"bearerAuth": []}]
              }
            },
            "/manage/publish-requests/{rid}/deny": {
              "post": {
                "operationId": "denyPublishRequest",
                "summary": "Deny (denyPublish)",
                "tags": ["publishing"],
                "description": "Same people as approve; a comment is required (422 without one).",
                "parameters": [{"$ref": "#/components/parameters/RequestId"}],
                "requestBody": {"required": true, "content": {"application/json": {"schema": {"$ref": "#/components/schemas/DenyComment"}}}},
                "responses": {
                  "200": {
                    "description": "The denied request; the tour is editable again and shows the comment.",
                    "content": {"application/json": {"schema": {"$ref": "#/components/schemas/PublishRequest"}}}
                  },
                  "400": {"$ref": "#/components/responses/BadRequest"},
                  "401": {"$ref": "#/components/responses/Unauthorized"},
                  "403": {"$ref": "#/components/responses/Forbidden"},
                  "404": {"$ref": "#/components/responses/NotFound"},
                  "409": {"$ref": "#/components/responses/Conflict"},
                  "413": {"$ref": "#/components/responses/ContentTooLarge"},
                  "415": {"$ref": "#/components/responses/UnsupportedMediaType"},
                  "422": {"$ref": "#/components/responses/ValidationFailed"}
                },
                "security": [{"bearerAuth": []}]
              }
            },
            "/manage/publish-requests/{rid}/withdraw": {
              "post": {
                "operationId": "withdrawPublishRequest",
                "summary": "Withdraw an open request",
                "tags": ["publishing"],
                "description": "The request's author or a manager of the site.",
                "parameters": [{"$ref": "#/components/parameters/RequestId"}],
                "responses": {
                  "200": {
                    "description": "The withdrawn request; the tour is editable again.",
                    "content": {"application/json": {"schema": {"$ref": "#/components/schemas/PublishRequest"}}}
                  },
                  "401": {"$ref": "#/components/responses/Unauthorized"},
                  "403": {"$ref": "#/components/responses/Forbidden"},
                  "404": {"$ref": "#/components/responses/NotFound"},
                  "409": {"$ref": "#/components/responses/Conflict"}
                },
                "security": [{"bearerAuth": []}]
              }
            },
            "/manage/publish-requests/{rid}/push": {
              "post": {
                "operationId": "pushPublishRequest",
                "summary": "Release a ready request (pushPublish)",
                "tags": ["publishing"],
                "description": "The request's author or a manager of the site; only a `ready` request.",
                "parameters": [{"$ref": "#/components/parameters/RequestId"}],
                "responses": {
                  "200": {
                    "description": "The new package version; the mobile API lists it now.",
                    "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Release"}}}
                  },
                  "401": {"$ref": "#/components/responses/Unauthorized"},
                  "403": {"$ref": "#/components/responses/Forbidden"},
                  "404": {"$ref": "#/components/responses/NotFound"},
                  "409": {"$ref": "#/components/responses/Conflict"}
                },
                "security": [{"bearerAuth": []}]
              }
            },
            "/manage/packages/{pid}/unpublish": {
              "post": {
                "operationId": "unpublishPackage",
                "summary": "Hide a package from the mobile API",
                "tags": ["publishing"],
                "description": "Managers of the site.",
                "parameters": [{"$ref": "#/components/parameters/ManagedPackageId"}],
                "responses": {
                  "200": {
                    "description": "Hidden: the mobile API answers 410 for it.",
                    "content": {"application/json": {"schema": {"$ref": "#/components/schemas/PackageVisibility"}}}
                  },
                  "401": {"$ref": "#/components/responses/Unauthorized"},
                  "403": {"$ref": "#/components/responses/Forbidden"},
                  "404": {"$ref": "#/components/responses/NotFound"},
                  "409": {"$ref": "#/components/responses/Conflict"}
                },
                "security": [{"bearerAuth": []}]
              }
            },
            "/manage/packages/{pid}/publish": {
              "post": {
                "operationId": "republishPackage",
                "summary": "Show an unpublished package again",
                "tags": ["publishing"],
                "description": "Managers of the site.",
                "parameters": [{"$ref": "#/components/parameters/ManagedPackageId"}],
                "responses": {
                  "200": {
                    "description": "Visible again.",
                    "content": {"application/json": {"schema": {"$ref": "#/components/schemas/PackageVisibility"}}}
                  },
                  "401": {"$ref": "#/components/responses/Unauthorized"},
                  "403": {"$ref": "#/components/responses/Forbidden"},
                  "404": {"$ref": "#/components/responses/NotFound"},
                  "409": {"$ref": "#/components/responses/Conflict"}
                },
                "security": [{"bearerAuth": []}]
              }
            },
            "/manage/packages/{pid}/rollback": {
              "post": {
                "operationId": "rollbackPackage",
                "summary": "Serve an earlier version again",
                "tags": ["publishing"],
                "description": "Managers of the site. 422 when the version does not exist, 409 when it is already the one served.",
                "parameters": [{"$ref": "#/components/parameters/ManagedPackageId"}],
                "requestBody": {"required": true, "content": {"application/json": {"schema": {"$ref": "#/components/schemas/RollbackRequest"}}}},
                "responses": {
                  "200": {
                    "description": "The version the apps download from now on.",
                    "content": {"application/json": {"schema": {"$ref": "#/components/schemas/PackageRollback"}}}
                  },
                  "400": {"$ref": "#/components/responses/BadRequest"},
                  "401": {"$ref": "#/components/responses/Unauthorized"},
                  "403": {"$ref": "#/components/responses/Forbidden"},
                  "404": {"$ref": "#/components/responses/NotFound"},
                  "409": {"$ref": "#/components/responses/Conflict"},
                  "413": {"$ref": "#/components/responses/ContentTooLarge"},
                  "415": {"$ref": "#/components/responses/UnsupportedMediaType"},
                  "422": {"$ref": "#/components/responses/ValidationFailed"}
                },
                "security": [{"bearerAuth": []}]
              }
            }
          },
          "components": {
            "schemas": {
              "Error": {
                "type": "object",
                "description": "Every error under `/api/v1`.",
                "required": ["error"],
                "properties": {
                  "error": {
                    "type": "object",
                    "required": ["code", "message"],
                    "properties": {
                      "code": {
                        "type": "string",
                        "description": "Stable machine-readable code: `bad_request`, `unauthorized`, `forbidden`, `not_found`, `conflict`, `gone`, `precondition_failed`, `payload_too_large`, `unsupported_media_type`, `range_not_satisfiable`, `validation_failed`, `not_ready`, `checksum_mismatch`, …"
                      },
                      "message": {"type": "string", "description": "For people; never a stack trace."},
                      "fields": {
                        "type": "object",
                        "additionalProperties": {"type": "string"},
                        "description": "Field name → problem, for 422 answers about a request body."
                      }
                    }
                  }
                }
              },
              "Site": {
                "type": "object",
                "required": ["slug", "name", "description", "packageCount"],
                "properties": {
                  "slug": {"type": "string"},
                  "name": {"type": "string"},
                  "description": {"type": "string"},
                  "packageCount": {"type": "integer", "minimum": 0, "description": "Published, visible packages."}
                }
              },
              "PackageSummary": {
                "type": "object",
                "required": ["id", "name", "description", "size", "version", "sha256", "updatedAt"],
                "properties": {
                  "id": {"type": "string", "description": "The package id (stable across versions)."},
                  "name": {"type": "string"},
                  "description": {"type": "string"},
                  "size": {"type": "integer", "format": "int64", "minimum": 0, "description": "Bytes of the zip."},
                  "version": {"type": "integer", "minimum": 1},
                  "sha256": {"type": "string", "pattern": "^[0-9a-f]{64}$", "description": "Lowercase hex SHA-256."},
                  "updatedAt": {"type": "string", "format": "date-time", "description": "When this version was released."}
                }
              },
              "PackageDetail": {
                "type": "object",
                "required": [
                  "id",
                  "name",
                  "description",
                  "size",
                  "version",
                  "sha256",
                  "updatedAt",
                  "park",
                  "site",
                  "bounds",
                  "waypointCount",
                  "signature",
                  "manifest",
                  "downloadURL"
                ],
                "properties": {
                  "id": {"type": "string", "description": "The package id (stable across versions)."},
                  "name": {"type": "string"},
                  "description": {"type": "string"},
                  "size": {"type": "integer", "format": "int64", "minimum": 0, "description": "Bytes of the zip."},
                  "version": {"type": "integer", "minimum": 1},
                  "sha256": {"type": "string", "pattern": "^[0-9a-f]{64}$", "description": "Lowercase hex SHA-256."},
                  "updatedAt": {"type": "string", "format": "date-time", "description": "When this version was released."},
                  "park": {"type": "string", "description": "The site's name."},
                  "site": {"type": "string", "description": "The site's slug."},
                  "bounds": {"$ref": "#/components/schemas/Bounds"},
                  "waypointCount": {"type": "integer", "minimum": 0},
                  "signature": {
                    "type": "string",
                    "contentEncoding": "base64",
                    "description": "`manifest.sig`: Ed25519 signature of the exact bytes of `manifest.json` in the zip."
                  },
                  "manifest": {"$ref": "#/components/schemas/Manifest"},
                  "downloadURL": {"type": "string", "format": "uri", "description": "The immutable versioned download URL."}
                }
              },
              "Coordinates": {
                "type": "object",
                "description": "WGS84 degrees.",
                "required": ["latitude", "longitude"],
                "properties": {
                  "latitude": {"type": "number", "minimum": -90, "maximum": 90},
                  "longitude": {"type": "number", "minimum": -180, "maximum": 180}
                }
              },
              "Bounds": {
                "type": "object",
                "description": "The tour's frame: `northWest` holds (north, west), `southEast` (south, east).",
                "required": ["northWest", "southEast"],
                "properties": {"northWest": {"$ref": "#/components/schemas/Coordinates"}, "southEast": {"$ref": "#/components/schemas/Coordinates"}}
              },
              "Manifest": {
                "type": "object",
                "description": "`manifest.json` of a content package, format version 1 (keys exactly as in DESIGN.md; optional keys are omitted when absent, and later versions may add keys).",
                "required": [
                  "formatVersion",
                  "packageId",
                  "version",
                  "createdAt",
                  "packageName",
                  "park",
                  "mapName",
                  "bounds",
                  "description",
                  "waypoints"
                ],
                "properties": {
                  "formatVersion": {"type": "integer", "const": 1},
                  "packageId": {"type": "string"},
                  "version": {"type": "integer", "minimum": 1},
                  "createdAt": {"type": "string", "format": "date-time", "description": "UTC, whole seconds, e.g. `2026-11-22T10:00:00Z`."},
                  "packageName": {"type": "string"},
                  "park": {"type": "string"},
                  "mapName": {"type": "string"},
                  "bounds": {"$ref": "#/components/schemas/Bounds"},
                  "description": {"type": "string"},
                  "waypoints": {"type": "array", "items": {"$ref": "#/components/schemas/ManifestWaypoint"}},
                  "tiles": {"$ref": "#/components/schemas/ManifestTiles"},
                  "route": {
                    "type": "array",
                    "description": "The walking route as GeoJSON positions `[longitude, latitude]`.",
                    "items": {
                      "type": "array",
                      "prefixItems": [{"type": "number", "minimum": -180, "maximum": 180}, {"type": "number", "minimum": -90, "maximum": 90}],
                      "minItems": 2,
                      "maxItems": 2
                    }
                  },
                  "estimatedDurationMinutes": {"type": "integer", "minimum": 0},
                  "geoJSON": {"$ref": "#/components/schemas/FileReference"}
                }
              },
              "ManifestWaypoint": {
                "type": "object",
                "required": ["name", "order", "coordinates", "description", "assets"],
                "properties": {
                  "name": {"type": "string"},
                  "order": {"type": "integer", "minimum": 1},
                  "coordinates": {"$ref": "#/components/schemas/Coordinates"},
                  "description": {"type": "string"},
                  "assets": {"type": "array", "items": {"$ref": "#/components/schemas/ManifestAsset"}},
                  "distanceFromPreviousMeters": {"type": "number", "minimum": 0}
                }
              },
              "ManifestAsset": {
                "type": "object",
                "required": ["type", "path", "mimeType", "size", "sha256"],
                "properties": {
                  "type": {"type": "string", "enum": ["video", "audio", "image", "text"]},
                  "path": {"type": "string", "description": "Entry inside the zip, `waypoints/<folder>/<file>`."},
                  "mimeType": {"type": "string"},
                  "size": {"type": "integer", "format": "int64", "minimum": 0},
                  "sha256": {"type": "string", "pattern": "^[0-9a-f]{64}$", "description": "Lowercase hex SHA-256."}
                }
              },
              "ManifestTiles": {
                "type": "object",
                "required": ["path", "format", "minZoom", "maxZoom", "tileCount", "sha256"],
                "properties": {
                  "path": {"type": "string"},
                  "format": {"type": "string", "enum": ["png", "jpg", "webp", "pbf"]},
                  "minZoom": {"type": "integer", "minimum": 0},
                  "maxZoom": {"type": "integer", "minimum": 0},
                  "tileCount": {"type": "integer", "minimum": 0},
                  "sha256": {"type": "string", "pattern": "^[0-9a-f]{64}$", "description": "Lowercase hex SHA-256."},
                  "size": {"type": "integer", "format": "int64", "minimum": 0}
                }
              },
              "FileReference": {
                "type": "object",
                "required": ["path", "size", "sha256"],
                "properties": {
                  "path": {"type": "string"},
                  "size": {"type": "integer", "format": "int64", "minimum": 0},
                  "sha256": {"type": "string", "pattern": "^[0-9a-f]{64}$", "description": "Lowercase hex SHA-256."}
                }
              },
              "PackageHash": {
                "type": "object",
                "required": ["sha256", "version", "size"],
                "properties": {
                  "sha256": {"type": "string", "pattern": "^[0-9a-f]{64}$", "description": "Lowercase hex SHA-256."},
                  "version": {"type": "integer", "minimum": 1},
                  "size": {"type": "integer", "format": "int64", "minimum": 0}
                }
              },
              "VerifyRequest": {
                "type": "object",
                "required": ["sha256", "version"],
                "properties": {
                  "sha256": {"type": "string", "description": "Hex SHA-256 of the downloaded zip (case does not matter)."},
                  "version": {"type": "integer", "description": "The version that was downloaded."}
                }
              },
              "VerifyResult": {
                "type": "object",
                "required": ["valid", "expected"],
                "properties": {"valid": {"type": "boolean"}, "expected": {"$ref": "#/components/schemas/PackageHash"}}
              },
              "SigningKey": {
                "type": "object",
                "required": ["algorithm", "publicKey"],
                "properties": {
                  "algorithm": {"type": "string", "const": "ed25519"},
                  "publicKey": {"type": "string", "contentEncoding": "base64", "description": "The raw 32-byte Ed25519 public key, base64."}
                }
              },
              "Catalog": {
                "type": "object",
                "required": ["catalogVersion", "generatedAt", "expiresAt", "packages"],
                "properties": {
                  "catalogVersion": {"type": "integer", "minimum": 0, "description": "Grows by one at every release, unpublish or rollback."},
                  "generatedAt": {"type": "string", "format": "date-time"},
                  "expiresAt": {"type": "string", "format": "date-time"},
                  "packages": {"type": "array", "items": {"$ref": "#/components/schemas/CatalogEntry"}}
                }
              },
              "CatalogEntry": {
                "type": "object",
                "required": ["id", "site", "name", "version", "size", "sha256", "url"],
                "properties": {
                  "id": {"type": "string"},
                  "site": {"type": "string", "description": "The site's slug."},
                  "name": {"type": "string"},
                  "version": {"type": "integer", "minimum": 1},
                  "size": {"type": "integer", "format": "int64", "minimum": 0},
                  "sha256": {"type": "string", "pattern": "^[0-9a-f]{64}$", "description": "Lowercase hex SHA-256."},
                  "url": {"type": "string", "format": "uri", "description": "The versioned download URL."}
                }
              },
              "Frame": {
                "type": "object",
                "description": "The map frame in WGS84 degrees.",
                "required": ["north", "south", "east", "west"],
                "properties": {
                  "north": {"type": "number", "minimum": -90, "maximum": 90},
                  "south": {"type": "number", "minimum": -90, "maximum": 90},
                  "east": {"type": "number", "minimum": -180, "maximum": 180},
                  "west": {"type": "number", "minimum": -180, "maximum": 180}
                }
              },
              "Tour": {
                "type": "object",
                "description": "`frame` is absent until one is set.",
                "required": ["id", "site", "name", "description", "mapName", "state", "minZoom", "maxZoom", "paceKmh", "waypoints"],
                "properties": {
                  "id": {"type": "integer", "format": "int64"},
                  "site": {"type": "string", "description": "The site's slug."},
                  "name": {"type": "string"},
                  "description": {"type": "string"},
                  "mapName": {"type": "string", "description": "Slug used for the package's file name."},
                  "state": {"type": "string", "enum": ["draft", "inReview", "published"]},
                  "frame": {"$ref": "#/components/schemas/Frame"},
                  "minZoom": {"type": "integer", "minimum": 0, "maximum": 20},
                  "maxZoom": {"type": "integer", "minimum": 0, "maximum": 20},
                  "paceKmh": {"type": "number", "minimum": 0.5, "maximum": 20, "description": "Walking pace of the duration estimate."},
                  "waypoints": {"type": "array", "items": {"$ref": "#/components/schemas/Waypoint"}}
                }
              },
              "TourCreate": {
                "type": "object",
                "required": ["site", "name"],
                "properties": {
                  "site": {"type": "string", "description": "The site's slug."},
                  "name": {"type": "string", "minLength": 1, "maxLength": 120},
                  "description": {"type": "string", "maxLength": 20000},
                  "mapName": {
                    "type": "string",
                    "description": "2 to 60 lowercase letters, digits and single hyphens; derived from the name when empty."
                  }
                }
              },
              "TourPatch": {
                "type": "object",
                "required": [],
                "properties": {
                  "name": {"type": "string", "minLength": 1, "maxLength": 120},
                  "description": {"type": "string", "maxLength": 20000},
                  "mapName": {"type": "string"},
                  "frame": {"$ref": "#/components/schemas/Frame"},
                  "minZoom": {"type": "integer", "minimum": 0, "maximum": 20},
                  "maxZoom": {"type": "integer", "minimum": 0, "maximum": 20},
                  "paceKmh": {"type": "number", "minimum": 0.5, "maximum": 20, "description": "Walking pace of the duration estimate, km/h."}
                }
              },
              "Waypoint": {
                "type": "object",
                "required": ["id", "name", "order", "latitude", "longitude", "description"],
                "properties": {
                  "id": {"type": "integer", "format": "int64"},
                  "name": {"type": "string"},
                  "order": {"type": "integer", "minimum": 1, "description": "1-based position in the tour."},
                  "latitude": {"type": "number", "minimum": -90, "maximum": 90},
                  "longitude": {"type": "number", "minimum": -180, "maximum": 180},
                  "description": {"type": "string"}
                }
              },
              "WaypointCreate": {
                "type": "object",
                "required": ["name", "latitude", "longitude"],
                "properties": {
                  "name": {"type": "string", "minLength": 1, "maxLength": 120},
                  "order": {"type": "integer", "minimum": 1},
                  "latitude": {"type": "number", "minimum": -90, "maximum": 90},
                  "longitude": {"type": "number", "minimum": -180, "maximum": 180},
                  "description": {"type": "string", "maxLength": 20000}
                }
              },
              "WaypointPatch": {
                "type": "object",
                "required": [],
                "properties": {
                  "name": {"type": "string", "minLength": 1, "maxLength": 120},
                  "order": {"type": "integer", "minimum": 1},
                  "latitude": {"type": "number", "minimum": -90, "maximum": 90},
                  "longitude": {"type": "number", "minimum": -180, "maximum": 180},
                  "description": {"type": "string", "maxLength": 20000}
                }
              },
              "GeoJSONFeatureCollection": {
                "type": "object",
                "description": "RFC 7946.",
                "required": ["type", "bbox", "features"],
                "properties": {
                  "type": {"type": "string", "const": "FeatureCollection"},
                  "bbox": {"type": "array", "items": {"type": "number"}, "minItems": 4, "maxItems": 4, "description": "west, south, east, north."},
                  "features": {"type": "array", "items": {"$ref": "#/components/schemas/GeoJSONFeature"}}
                }
              },
              "GeoJSONFeature": {
                "type": "object",
                "required": ["type", "geometry", "properties"],
                "properties": {
                  "type": {"type": "string", "const": "Feature"},
                  "geometry": {
                    "type": "object",
                    "required": ["type", "coordinates"],
                    "properties": {"type": {"type": "string", "enum": ["Point", "LineString", "Polygon"]}, "coordinates": {"type": "array"}}
                  },
                  "properties": {
                    "type": "object",
                    "required": ["kind"],
                    "properties": {
                      "kind": {"type": "string", "enum": ["waypoint", "frame", "route"]},
                      "name": {"type": "string"},
                      "order": {"type": "integer"},
                      "description": {"type": "string"},
                      "assetCount": {"type": "integer", "minimum": 0},
                      "estimatedDurationMinutes": {"type": "integer", "minimum": 0}
                    }
                  }
                }
              },
              "ImportUpload": {
                "type": "object",
                "required": ["file"],
                "properties": {
                  "file": {
                    "type": "string",
                    "contentMediaType": "application/octet-stream",
                    "description": "A GeoJSON or GPX file (at most 20 MB)."
                  }
                }
              },
              "ImportResult": {
                "type": "object",
                "required": ["dryRun", "applied", "plan"],
                "properties": {
                  "dryRun": {"type": "boolean"},
                  "applied": {"type": "boolean"},
                  "plan": {
                    "type": "object",
                    "required": ["waypoints", "routePoints", "setsFrame", "added", "changed", "skipped"],
                    "properties": {
                      "waypoints": {
                        "type": "array",
                        "items": {
                          "type": "object",
                          "required": ["action", "name", "latitude", "longitude"],
                          "properties": {
                            "action": {"type": "string", "enum": ["add", "change", "skip"]},
                            "name": {"type": "string"},
                            "latitude": {"type": "number"},
                            "longitude": {"type": "number"},
                            "reason": {"type": "string", "description": "Why a waypoint is skipped."}
                          }
                        }
                      },
                      "routePoints": {"type": "integer", "minimum": 0},
                      "routeLengthMeters": {"type": "number", "minimum": 0},
                      "frame": {"$ref": "#/components/schemas/Frame"},
                      "setsFrame": {"type": "boolean", "description": "The tour had no frame: the import sets `frame`."},
                      "added": {"type": "integer", "minimum": 0},
                      "changed": {"type": "integer", "minimum": 0},
                      "skipped": {"type": "integer", "minimum": 0}
                    }
                  }
                }
              },
              "TilesUpload": {
                "type": "object",
                "required": ["file"],
                "properties": {"file": {"type": "string", "contentMediaType": "application/vnd.sqlite3", "description": "The .mbtiles file."}}
              },
              "Tileset": {
                "type": "object",
                "required": [
                  "tour",
                  "originalName",
                  "size",
                  "sha256",
                  "format",
                  "minZoom",
                  "maxZoom",
                  "bounds",
                  "tileCount",
                  "attribution",
                  "scanStatus",
                  "scanDetail",
                  "createdAt"
                ],
                "properties": {
                  "tour": {"type": "integer", "format": "int64"},
                  "originalName": {"type": "string"},
                  "size": {"type": "integer", "format": "int64", "minimum": 0},
                  "sha256": {"type": "string", "pattern": "^[0-9a-f]{64}$", "description": "Lowercase hex SHA-256."},
                  "format": {"type": "string", "enum": ["png", "jpg", "webp"]},
                  "minZoom": {"type": "integer", "minimum": 0},
                  "maxZoom": {"type": "integer", "minimum": 0},
                  "bounds": {"$ref": "#/components/schemas/Frame"},
                  "tileCount": {"type": "integer", "minimum": 0},
                  "attribution": {"type": "string"},
                  "scanStatus": {"type": "string", "enum": ["pending", "clean", "infected", "unscannable", "error"]},
                  "scanDetail": {"type": "string"},
                  "createdAt": {"type": "string", "format": "date-time"}
                }
              },
              "Asset": {
                "type": "object",
                "required": ["id", "waypoint", "order", "kind", "originalName", "mimeType", "size", "sha256", "scanStatus", "createdAt"],
                "properties": {
                  "id": {"type": "integer", "format": "int64"},
                  "waypoint": {"type": "integer", "format": "int64", "description": "The waypoint's id."},
                  "order": {"type": "integer", "minimum": 1},
                  "kind": {"type": "string", "enum": ["video", "audio", "image", "text"]},
                  "originalName": {"type": "string", "description": "The uploader's file name (metadata only)."},
                  "mimeType": {"type": "string", "description": "Detected from the bytes."},
                  "size": {"type": "integer", "format": "int64", "minimum": 0},
                  "sha256": {"type": "string", "pattern": "^[0-9a-f]{64}$", "description": "Lowercase hex SHA-256."},
                  "scanStatus": {"type": "string", "enum": ["pending", "clean", "infected", "unscannable", "error"]},
                  "scanDetail": {"type": "string", "description": "The scanner's finding; only for the uploader and admins."},
                  "previewURL": {"type": "string", "format": "uri-reference", "description": "Panel preview; only for clean files."},
                  "createdAt": {"type": "string", "format": "date-time"}
                }
              },
              "AssetUpload": {
                "type": "object",
                "required": ["file"],
                "properties": {
                  "file": {
                    "type": "string",
                    "contentMediaType": "application/octet-stream",
                    "description": "Exactly one file part with a file name."
                  },
                  "replaces": {"type": "integer", "format": "int64", "description": "Id of an asset of the same waypoint to replace."}
                }
              },
              "PublishAccepted": {
                "type": "object",
                "required": ["requestId"],
                "properties": {"requestId": {"type": "string", "description": "The publish request's id."}}
              },
              "PublishRequest": {
                "type": "object",
                "required": ["id", "packageId", "version", "state", "approvals", "requiredApprovals", "progress", "reviews"],
                "properties": {
                  "id": {"type": "string"},
                  "tour": {"type": "integer", "format": "int64", "description": "Absent once the tour was deleted."},
                  "packageId": {"type": "string"},
                  "version": {"type": "integer", "minimum": 1, "description": "The version this request releases."},
                  "state": {"type": "string", "enum": ["building", "pending", "ready", "published", "denied", "failed", "withdrawn"]},
                  "approvals": {"type": "integer", "minimum": 0},
                  "requiredApprovals": {"type": "integer", "minimum": 1},
                  "progress": {
                    "type": "object",
                    "description": "Of the package build.",
                    "required": ["filesDone", "filesTotal", "bytesDone", "bytesTotal"],
                    "properties": {
                      "filesDone": {"type": "integer", "minimum": 0},
                      "filesTotal": {"type": "integer", "minimum": 0},
                      "bytesDone": {"type": "integer", "format": "int64", "minimum": 0},
                      "bytesTotal": {"type": "integer", "format": "int64", "minimum": 0}
                    }
                  },
                  "failureReason": {"type": "string", "description": "Why the build failed (state `failed`)."},
                  "denialComment": {"type": "string", "description": "The reviewer's comment (state `denied`)."},
                  "sha256": {"type": "string", "pattern": "^[0-9a-f]{64}$", "description": "Of the built zip, once built."},
                  "size": {"type": "integer", "format": "int64", "minimum": 0, "description": "Of the built zip, once built."},
                  "reviews": {"type": "array", "items": {"$ref": "#/components/schemas/Review"}}
                }
              },
              "Review": {
                "type": "object",
                "required": ["reviewer", "decision", "comment", "at"],
                "properties": {
                  "reviewer": {"type": "string", "description": "The reviewer's display name."},
                  "decision": {"type": "string", "enum": ["approve", "deny"]},
                  "comment": {"type": "string"},
                  "at": {"type": "string", "format": "date-time"}
                }
              },
              "ReviewComment": {"type": "object", "required": [], "properties": {"comment": {"type": "string", "maxLength": 5000}}},
              "DenyComment": {
                "type": "object",
                "required": ["comment"],
                "properties": {"comment": {"type": "string", "minLength": 1, "maxLength": 5000, "description": "What must change; shown on the tour."}}
              },
              "Release": {
                "type": "object",
                "required": ["packageId", "version", "sha256"],
                "properties": {
                  "packageId": {"type": "string"},
                  "version": {"type": "integer", "minimum": 1},
                  "sha256": {"type": "string", "pattern": "^[0-9a-f]{64}$", "description": "Lowercase hex SHA-256."}
                }
              },
              "PackageVisibility": {
                "type": "object",
                "required": ["packageId", "visible"],
                "properties": {"packageId": {"type": "string"}, "visible": {"type": "boolean"}}
              },
              "RollbackRequest": {"type": "object", "required": ["version"], "properties": {"version": {"type": "integer", "minimum": 1}}},
              "PackageRollback": {
                "type": "object",
                "required": ["packageId", "currentVersion"],
                "properties": {"packageId": {"type": "string"}, "currentVersion": {"type": "integer", "minimum": 1}}
              }
            },
            "responses": {
              "NotModified": {
                "description": "`If-None-Match` names the current ETag: nothing changed.",
                "headers": {"ETag": {"$ref": "#/components/headers/ETag"}, "Cache-Control": {"$ref": "#/components/headers/CacheControl"}}
              },
              "BadRequest": {
                "description": "The request is malformed (JSON that does not fit the route, a missing parameter).",
                "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
              },
              "Unauthorized": {
                "description": "No bearer token, or one that is unknown, revoked or whose user is disabled.",
                "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
              },
              "Forbidden": {
                "description": "The caller may see the object but not do this to it.",
                "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
              },
              "NotFound": {
                "description": "No such object, or one the caller may not see.",
                "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
              },
              "Conflict": {
                "description": "The object's state does not allow this (a tour locked for review, a request already decided, …).",
                "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
              },
              "Gone": {
                "description": "The package has been unpublished.",
                "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
              },
              "ContentTooLarge": {
                "description": "The body (or the site's storage quota) is too large.",
                "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
              },
              "UnsupportedMediaType": {
                "description": "The body's media type (or, for uploads, the file's detected type) is not accepted.",
                "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
              },
              "RangeNotSatisfiable": {
                "description": "The range is outside the file.",
                "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}},
                "headers": {"Content-Range": {"$ref": "#/components/headers/ContentRangeUnsatisfied"}}
              },
              "ValidationFailed": {
                "description": "The values are refused; `fields` says why, field by field.",
                "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
              },
              "TusBadRequest": {
                "description": "A tus header is missing or malformed.",
                "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}},
                "headers": {"Tus-Resumable": {"$ref": "#/components/headers/TusResumable"}}
              },
              "TusUnauthorized": {
                "description": "No bearer token, or one that is unknown, revoked or whose user is disabled.",
                "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}},
                "headers": {"Tus-Resumable": {"$ref": "#/components/headers/TusResumable"}}
              },
              "TusForbidden": {
                "description": "The caller may see the tour but not change it.",
                "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}},
                "headers": {"Tus-Resumable": {"$ref": "#/components/headers/TusResumable"}}
              },
              "TusValidationFailed": {
                "description": "The finished file is empty.",
                "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}},
                "headers": {"Tus-Resumable": {"$ref": "#/components/headers/TusResumable"}}
              },
              "TusNotFound": {
                "description": "No such upload of this user (or, at creation, no such tour or waypoint).",
                "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}},
                "headers": {"Tus-Resumable": {"$ref": "#/components/headers/TusResumable"}}
              },
              "TusConflict": {
                "description": "`Upload-Offset` does not match the stored offset, another request is writing to this upload, or (on the last byte) the tour was locked for review meanwhile.",
                "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}},
                "headers": {"Tus-Resumable": {"$ref": "#/components/headers/TusResumable"}}
              },
              "TusGone": {
                "description": "The upload expired.",
                "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}},
                "headers": {"Tus-Resumable": {"$ref": "#/components/headers/TusResumable"}}
              },
              "TusPreconditionFailed": {
                "description": "`Tus-Resumable` is missing or not 1.0.0.",
                "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}},
                "headers": {"Tus-Resumable": {"$ref": "#/components/headers/TusResumable"}, "Tus-Version": {"$ref": "#/components/headers/TusVersion"}}
              },
              "TusContentTooLarge": {
                "description": "Larger than `Tus-Max-Size`, than `Upload-Length`, or than the site's quota.",
                "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}},
                "headers": {"Tus-Resumable": {"$ref": "#/components/headers/TusResumable"}}
              },
              "TusUnsupportedMediaType": {
                "description": "The PATCH body is not `application/offset+octet-stream`, or the finished file is not an accepted type.",
                "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}},
                "headers": {"Tus-Resumable": {"$ref": "#/components/headers/TusResumable"}}
              },
              "TusChecksumMismatch": {
                "description": "460 Checksum Mismatch: `Upload-Checksum` does not match this PATCH's bytes; none were kept.",
                "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}},
                "headers": {"Tus-Resumable": {"$ref": "#/components/headers/TusResumable"}}
              }
            },
            "parameters": {
              "SiteSlug": {"name": "slug", "in": "path", "required": true, "schema": {"type": "string"}, "description": "The site's slug."},
              "PackageId": {"name": "id", "in": "path", "required": true, "schema": {"type": "string"}, "description": "The package id."},
              "PackageVersionNumber": {
                "name": "version",
                "in": "path",
                "required": true,
                "schema": {"type": "integer", "minimum": 1},
                "description": "A released version number."
              },
              "ManagedPackageId": {"name": "pid", "in": "path", "required": true, "schema": {"type": "string"}, "description": "The package id."},
              "TourId": {
                "name": "id",
                "in": "path",
                "required": true,
                "schema": {"type": "integer", "format": "int64"},
                "description": "The tour's id."
              },
              "WaypointId": {
                "name": "wid",
                "in": "path",
                "required": true,
                "schema": {"type": "integer", "format": "int64"},
                "description": "The waypoint's id (of this tour)."
              },
              "AssetId": {
                "name": "aid",
                "in": "path",
                "required": true,
                "schema": {"type": "integer", "format": "int64"},
                "description": "The asset's id."
              },
              "RequestId": {"name": "rid", "in": "path", "required": true, "schema": {"type": "string"}, "description": "The publish request's id."},
              "UploadId": {"name": "uploadId", "in": "path", "required": true, "schema": {"type": "string"}, "description": "The tus upload's id."},
              "IfNoneMatch": {
                "name": "If-None-Match",
                "in": "header",
                "required": false,
                "schema": {"type": "string"},
                "description": "An ETag from an earlier answer: 304 when nothing changed."
              },
              "Range": {
                "name": "Range",
                "in": "header",
                "required": false,
                "schema": {"type": "string", "pattern": "^bytes=[0-9]*-[0-9]*(, ?[0-9]*-[0-9]*)*$"},
                "example": "bytes=1048576-",
                "description": "One byte range (RFC 9110). Several ranges, or an invalid one, get the whole file."
              },
              "IfRange": {
                "name": "If-Range",
                "in": "header",
                "required": false,
                "schema": {"type": "string"},
                "description": "The ETag of the partial copy: when it no longer matches, the whole current file comes back."
              },
              "TusResumable": {"name": "Tus-Resumable", "in": "header", "required": true, "schema": {"type": "string", "const": "1.0.0"}},
              "UploadLengthHeader": {
                "name": "Upload-Length",
                "in": "header",
                "required": true,
                "schema": {"type": "integer", "minimum": 0},
                "description": "The file's size in bytes (deferred lengths are not supported)."
              },
              "UploadMetadataHeader": {
                "name": "Upload-Metadata",
                "in": "header",
                "required": true,
                "schema": {"type": "string"},
                "example": "tour MTI=,waypoint MzQ=,filename aW50cm8ubXA0",
                "description": "`key base64value` pairs separated by commas: `tour`, `waypoint` (required), `filename`, `replaces`."
              },
              "UploadOffsetHeader": {
                "name": "Upload-Offset",
                "in": "header",
                "required": true,
                "schema": {"type": "integer", "minimum": 0},
                "description": "Must equal the server's offset (ask HEAD)."
              },
              "UploadChecksumHeader": {
                "name": "Upload-Checksum",
                "in": "header",
                "required": false,
                "schema": {"type": "string"},
                "example": "sha256 47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=",
                "description": "`sha1|sha256 <base64 digest>` of this PATCH's body."
              }
            },
            "headers": {
              "ETag": {
                "description": "Strong validator: the quoted SHA-256 of the representation.",
                "required": false,
                "schema": {"type": "string", "pattern": "^\"[0-9a-f]{64}\"$"}
              },
              "CacheControl": {"description": "Caching rule.", "required": false, "schema": {"type": "string"}},
              "PackageVersion": {"description": "The version number of the package served.", "required": true, "schema": {"type": "integer", "minimum": 1}},
              "CatalogSignature": {
                "description": "Base64 Ed25519 signature of the exact body bytes.",
                "required": true,
                "schema": {"type": "string", "contentEncoding": "base64"}
              },
              "AcceptRanges": {"description": "Always `bytes`.", "required": false, "schema": {"type": "string", "const": "bytes"}},
              "ContentLength": {"description": "Bytes of the body.", "required": false, "schema": {"type": "integer", "minimum": 0}},
              "ContentDisposition": {"description": "`attachment; filename=\"<mapName>-v<n>.zip\"`.", "required": false, "schema": {"type": "string"}},
              "ContentRange": {
                "description": "`bytes <first>-<last>/<size>`.",
                "required": true,
                "schema": {"type": "string", "pattern": "^bytes [0-9]+-[0-9]+/[0-9]+$"}
              },
              "ContentRangeUnsatisfied": {"description": "`bytes */<size>`.", "required": true, "schema": {"type": "string", "pattern": "^bytes \\*/[0-9]+$"}},
              "AssetLocation": {"description": "The asset's URL in this API.", "required": true, "schema": {"type": "string"}},
              "TilesetLocation": {"description": "The tileset's URL in this API.", "required": true, "schema": {"type": "string"}},
              "GeoJSONDisposition": {"description": "`attachment; filename=\"<mapName>.geojson\"`.", "required": false, "schema": {"type": "string"}},
              "PublishRequestLocation": {"description": "The publish request's URL in this API.", "required": true, "schema": {"type": "string"}},
              "UploadLocation": {"description": "The upload's URL, to PATCH and HEAD.", "required": true, "schema": {"type": "string"}},
              "TusResumable": {"description": "The tus protocol version.", "required": true, "schema": {"type": "string", "const": "1.0.0"}},
              "TusVersion": {"description": "Supported tus versions.", "required": false, "schema": {"type": "string"}},
              "TusExtension": {"description": "Supported tus extensions.", "required": false, "schema": {"type": "string"}},
              "TusMaxSize": {"description": "Largest upload in bytes.", "required": false, "schema": {"type": "integer", "minimum": 0}},
              "TusChecksumAlgorithm": {"description": "Algorithms for `Upload-Checksum`.", "required": false, "schema": {"type": "string"}},
              "UploadOffset": {"description": "Bytes received so far.", "required": true, "schema": {"type": "integer", "minimum": 0}},
              "UploadLength": {"description": "The upload's total size.", "required": false, "schema": {"type": "integer", "minimum": 0}},
              "UploadExpires": {"description": "When an unfinished upload is removed (HTTP date).", "required": false, "schema": {"type": "string"}},
              "AssetIdHeader": {"description": "On the final PATCH: the new asset's id.", "required": false, "schema": {"type": "integer"}},
              "AssetLocationHeader": {"description": "On the final PATCH: the new asset's URL in this API.", "required": false, "schema": {"type": "string"}}
            },
            "securitySchemes": {
              "bearerAuth": {"type": "http", "scheme": "bearer", "bearerFormat": "tc_…", "description": "An API token: `Authorization: Bearer tc_…`."}
            }
          }
        }
        """#
}
