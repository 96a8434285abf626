; Outline of a C# file. Capture names are described in python.scm. Records are classes (or
; structs for `record struct`); the first namespace is the file's package.

(namespace_declaration name: (_) @package)

(file_scoped_namespace_declaration name: (_) @package)

(namespace_declaration name: (_) @name) @definition.namespace

(file_scoped_namespace_declaration name: (_) @name) @definition.namespace

(class_declaration name: (identifier) @name) @definition.class

(record_declaration name: (identifier) @name) @definition.class

(interface_declaration name: (identifier) @name) @definition.interface

(struct_declaration name: (identifier) @name) @definition.struct

(enum_declaration name: (identifier) @name) @definition.enum

(delegate_declaration name: (identifier) @name) @definition.type

(method_declaration name: (identifier) @name) @definition.method

(constructor_declaration name: (identifier) @name) @definition.constructor

(property_declaration name: (identifier) @name) @definition.property

(indexer_declaration "this" @name) @definition.property

(event_declaration name: (identifier) @name) @definition.property

(event_field_declaration
  (variable_declaration (variable_declarator name: (identifier) @name))) @definition.property

(operator_declaration operator: _ @name) @definition.method

(conversion_operator_declaration type: (_) @name) @definition.method

(using_directive) @import.csharp
