-- A markdown cell's directive line (`#| export`, which nbdev reads to export the front page's pitch as the package
-- docstring) is for the tools, not the reader: drop it where it opens a paragraph.
function Para(el)
  local c = el.content
  if #c == 0 or c[1].t ~= 'Str' or c[1].text:sub(1, 2) ~= '#|' then return nil end
  local i = 1
  while i <= #c and c[i].t ~= 'SoftBreak' and c[i].t ~= 'LineBreak' do i = i + 1 end
  local rest = pandoc.List()
  for j = i + 1, #c do rest:insert(c[j]) end
  if #rest == 0 then return {} end
  return pandoc.Para(rest)
end
