; Outline of a Java file. Capture names are described in python.scm. Records are classes.

(package_declaration [(scoped_identifier) (identifier)] @package)

(class_declaration name: (identifier) @name) @definition.class

(record_declaration name: (identifier) @name) @definition.class

(interface_declaration name: (identifier) @name) @definition.interface

(annotation_type_declaration name: (identifier) @name) @definition.interface

(enum_declaration name: (identifier) @name) @definition.enum

(method_declaration name: (identifier) @name) @definition.method

(constructor_declaration name: (identifier) @name) @definition.constructor

(compact_constructor_declaration name: (identifier) @name) @definition.constructor

(import_declaration) @import.java
