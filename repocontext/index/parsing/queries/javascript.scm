; inherits: ecma
; JavaScript additions to ecma.scm.

(field_definition
  property: (_) @name
  value: [(arrow_function) (function_expression)]) @definition.method

; CommonJS and prototype style at file level: `exports.parse = function`, `app.use = (x) =>`,
; and `View.prototype.render = function`, a method of `View`.
((program
  (expression_statement
    (assignment_expression
      left: (member_expression property: (property_identifier) @name)
      right: [(function_expression) (arrow_function)])) @definition.function)
  (#not-eq? @name "exports"))

((program
  (expression_statement
    (assignment_expression
      left: (member_expression
        object: (member_expression
          object: (identifier) @scope
          property: (property_identifier) @_prototype)
        property: (property_identifier) @name)
      right: [(function_expression) (arrow_function)])) @definition.method)
  (#eq? @_prototype "prototype"))
