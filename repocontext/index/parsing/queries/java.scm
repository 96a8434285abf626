; Outline of a Java file. Capture names are described in python.scm. Records are classes.

(package_declaration [(scoped_identifier) (identifier)] @package)

(class_declaration name: (identifier) @name) @definition.class

(record_declaration name: (identifier) @name) @definition.class

(interface_declaration name: (identifier) @name) @definition.interface

(annotation_type_declaration name: (identifier) @name) @definition.interface

(enum_declaration name: (identifier) @name) @definition.enum

; Methods of declared types only: an anonymous class's or an enum constant's body is not one.
(class_declaration body: (class_body (method_declaration name: (identifier) @name) @definition.method))

(record_declaration body: (class_body (method_declaration name: (identifier) @name) @definition.method))

(interface_declaration
  body: (interface_body (method_declaration name: (identifier) @name) @definition.method))

(enum_declaration
  body: (enum_body (enum_body_declarations
    (method_declaration name: (identifier) @name) @definition.method)))

(annotation_type_declaration
  body: (annotation_type_body
    (annotation_type_element_declaration name: (identifier) @name) @definition.method))

(constructor_declaration name: (identifier) @name) @definition.constructor

(compact_constructor_declaration name: (identifier) @name) @definition.constructor

(import_declaration) @import.java
