import { Parser } from 'htmlparser2';

export interface ParsedPage {
  title: string;
  words: number;
  /** Absolute http(s) links, without fragments, each once, in document order. */
  links: string[];
}

const SKIPPED_TEXT = new Set(['script', 'style', 'noscript', 'template']);

function absoluteLink(href: string, base: string): string | undefined {
  if (!URL.canParse(href, base)) return undefined;
  const url = new URL(href, base);
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return undefined;
  url.hash = '';
  return url.href;
}

/** Title, visible word count and links of an HTML document, with a forgiving real parser. */
export function parsePage(html: string, baseUrl: string): ParsedPage {
  let title = '';
  let words = 0;
  const links: string[] = [];
  const seen = new Set<string>();
  const open: string[] = [];
  let base = baseUrl;
  const parser = new Parser(
    {
      onopentag(name, attributes) {
        open.push(name);
        if (name === 'base' && attributes.href !== undefined)
          base = absoluteLink(attributes.href, baseUrl) ?? base;
        if (name === 'a' && attributes.href !== undefined) {
          const link = absoluteLink(attributes.href, base);
          if (link !== undefined && !seen.has(link)) {
            seen.add(link);
            links.push(link);
          }
        }
      },
      ontext(text) {
        const inside = open.at(-1);
        if (inside === 'title') title += text;
        else if (inside === undefined || !SKIPPED_TEXT.has(inside))
          words += text.split(/\s+/).filter((word) => /\p{L}|\p{N}/u.test(word)).length;
      },
      onclosetag() {
        open.pop();
      },
    },
    { decodeEntities: true },
  );
  parser.write(html);
  parser.end();
  return { title: title.trim().replace(/\s+/g, ' '), words, links };
}
