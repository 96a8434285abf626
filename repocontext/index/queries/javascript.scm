; inherits: ecma
; JavaScript additions to ecma.scm.

(field_definition
  property: (_) @name
  value: [(arrow_function) (function_expression)]) @definition.method
