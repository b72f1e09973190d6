import Foundation
import Hummingbird
import Shared

/// The phones' read API (DESIGN.md "Feed API"), answered from the projection.
struct FeedRoutes<Context: RequestContext> {
    let projection: CatalogProjection

    struct TourSummary: Codable {
        let id: UUID
        let name: String
        let summary: String
        let stopCount: Int
        let updatedAt: Date
    }

    struct TourList: Codable {
        let tours: [TourSummary]
    }

    func register(on router: Router<Context>) {
        router.get("/v1/tours") { _, _ -> Response in
            let tours = projection.content.publishedTours.map {
                TourSummary(id: $0.id, name: $0.content.name, summary: $0.content.summary, stopCount: $0.stops.count, updatedAt: $0.updatedAt)
            }
            return try jsonResponse(TourList(tours: tours))
        }
    }
}

func jsonResponse<T: Encodable>(_ value: T) throws -> Response {
    let data = try JSONCoding.encoder.encode(value)
    return Response(status: .ok, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(bytes: data)))
}
