import HTTPTypes
import Hummingbird

/// `GET /openapi.json`: the OpenAPI 3.1 document of the whole feed API.
struct OpenAPIRoutes<Context: RequestContext> {
    let document: RenderedResource

    static func render() -> RenderedResource {
        RenderedResource(bytes: Array(OpenAPIDocument.json.utf8), contentType: MediaTypes.json,
                         cacheControl: CachePolicy.document, compressor: GzipCompressor())
    }

    func register(on router: Router<Context>) {
        router.get("/openapi.json") { [document] request, _ in
            document.response(to: request)
        }
    }
}
