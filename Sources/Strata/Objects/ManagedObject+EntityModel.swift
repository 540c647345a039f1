import Foundation

extension ManagedObject: EntityModel {
    /// The classes of ``relatedModelTypes``, for the query layer.
    public static var _relatedEntityModels: [any EntityModel.Type] { relatedModelTypes.map { $0 } }

    /// Whether the key path reads the object's own ``objectID``. `@Entity` does not list
    /// `objectID` among the properties, so the key path is read on a blank instance (never
    /// inserted anywhere) and compared.
    public static func _isObjectIDKeyPath(_ keyPath: AnyKeyPath) -> Bool {
        guard type(of: keyPath).valueType == ObjectID.self, entityDescription != nil else { return false }
        let blank = self.init(_storedEntity: entity)
        guard let id = blank[keyPath: keyPath] as? ObjectID else { return false }
        return id == blank.objectID
    }
}

extension ManagedObject: PredicateArgument {
    /// The object, by its ID.
    public var predicateExpression: QueryExpression { .objectID(objectID) }
}

extension Array where Element == ManagedObject {
    /// The objects that are `Model`s, as `Model`s, in order.
    ///
    /// A fetch's objects are nearly always exactly of the requested class: comparing the class
    /// first skips a dynamic cast per object (code generic over `Model` is not specialized for
    /// the app's class, so `compactMap { $0 as? Model }` pays the runtime's full cast).
    func ofType<Model: ManagedObject>(_ type: Model.Type) -> [Model] {
        var result: [Model] = []
        result.reserveCapacity(count)
        for object in self {
            if let model = object.cast(to: type) { result.append(model) }
        }
        return result
    }
}

extension ManagedObject {
    /// The object as a `Model`, or `nil`: an object of exactly `Model` (nearly always the case)
    /// is recognised by its class, without the runtime's dynamic cast.
    func cast<Model: ManagedObject>(to type: Model.Type) -> Model? {
        Swift.type(of: self) == type ? unsafeDowncast(self, to: Model.self) : self as? Model
    }
}
