import Foundation

// The people directory's messages (DESIGN.md, "People"): an entry's content, as commands carry it; its state and
// events are catalog records (`person.changed` carries it under `person`).

/// What an editor writes about a person in the directory.
public struct PersonContent: CatalogRecordContent {
    public static var recordKind: String { "person" }
    public static var eventRecordKey: StaticString { "person" }
    public static var commandField: String { "person" }
    public static var commandContent: WritableKeyPath<CatalogCommand, Self?> { \.person }
    public static var resultState: WritableKeyPath<CatalogCommandResult, PersonState?> { \.person }

    public var name: String
    /// Job title, e.g. Director of Admissions.
    public var role: String
    public var department: String
    public var email: String?
    public var phone: String?
    /// Where their office is: a POI, else free text (a room, an address).
    public var officePoiId: UUID?
    public var officeText: String?
    public var interests: [String]
    public var profileUrl: String?
    public var photoUrl: String?
    /// Their role and department in other languages (DESIGN.md "Languages"); nil when none.
    public var translations: Translations?

    public init(name: String, role: String = "", department: String = "", email: String? = nil, phone: String? = nil,
                officePoiId: UUID? = nil, officeText: String? = nil, interests: [String] = [], profileUrl: String? = nil, photoUrl: String? = nil,
                translations: Translations? = nil) {
        self.name = name
        self.role = role
        self.department = department
        self.email = email
        self.phone = phone
        self.officePoiId = officePoiId
        self.officeText = officeText
        self.interests = interests
        self.profileUrl = profileUrl
        self.photoUrl = photoUrl
        self.translations = Self.tidy(translations)
    }

    private enum CodingKeys: String, CodingKey {
        case name, role, department, email, phone, officePoiId, officeText, interests, profileUrl, photoUrl, translations
    }

    /// Through `init`, as the codec's reader: translations are tidied the same way whichever reads them.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        self.init(name: try c.decode(String.self, forKey: .name), role: try c.decode(String.self, forKey: .role),
                  department: try c.decode(String.self, forKey: .department), email: try c.decodeIfPresent(String.self, forKey: .email),
                  phone: try c.decodeIfPresent(String.self, forKey: .phone), officePoiId: try c.decodeIfPresent(UUID.self, forKey: .officePoiId),
                  officeText: try c.decodeIfPresent(String.self, forKey: .officeText), interests: try c.decode([String].self, forKey: .interests),
                  profileUrl: try c.decodeIfPresent(String.self, forKey: .profileUrl), photoUrl: try c.decodeIfPresent(String.self, forKey: .photoUrl),
                  translations: try c.decodeIfPresent(Translations.self, forKey: .translations))
    }
}

public typealias PersonState = CatalogRecordState<PersonContent>
public typealias PersonEvent = CatalogRecordEvent<PersonContent>
