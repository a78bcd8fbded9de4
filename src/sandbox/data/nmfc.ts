// NMFC codes: item numbers with sub-items. Density-rated items have the 11 subs of the standard
// density scale; others a single entry with sub ''. Also the deterministic generator used for
// large lists (setGenerated), one entry per index, computed on demand.
import type { Entry } from '../types.ts';

/** The standard 11-tier density scale: [sub description, class]. */
const densityScale: [string, string][] = [
  ['less than 1 pound per cubic foot', '400'],
  ['1 but less than 2 pounds per cubic foot', '300'],
  ['2 but less than 4 pounds per cubic foot', '250'],
  ['4 but less than 6 pounds per cubic foot', '175'],
  ['6 but less than 8 pounds per cubic foot', '125'],
  ['8 but less than 10 pounds per cubic foot', '100'],
  ['10 but less than 12 pounds per cubic foot', '92.5'],
  ['12 but less than 15 pounds per cubic foot', '85'],
  ['15 but less than 22.5 pounds per cubic foot', '70'],
  ['22.5 but less than 30 pounds per cubic foot', '65'],
  ['30 pounds per cubic foot or greater', '60'],
];

const densityItems: [item: string, description: string][] = [
  ['156600', 'Plastic articles, NOI'],
  ['79300', 'Furniture, NOI, wood'],
  ['80430', 'Furniture, NOI, metal'],
  ['61680', 'Electrical equipment, NOI'],
  ['116030', 'Machinery parts, NOI'],
  ['133300', 'Printed matter, NOI'],
  ['49880', 'Containers, NOI, plastic'],
  ['43940', 'Commodities, freight all kinds, consolidated'],
  ['189800', 'Toys, games or play equipment, NOI'],
  ['150080', 'Paper articles, NOI'],
  ['184300', 'Textile products, NOI'],
  ['174400', 'Sporting goods, NOI'],
  ['86750', 'Glass articles, NOI'],
  ['110420', 'Lamps or lighting fixtures, NOI'],
  ['69420', 'Foodstuffs, NOI, boxed'],
  ['62090', 'Electronic equipment parts, NOI'],
  ['100240', 'Household goods, NOI'],
  ['23850', 'Automotive parts, NOI'],
  ['48580', 'Computers or computer components'],
  ['112280', 'Lumber articles, NOI'],
  ['120610', 'Medical equipment or supplies, NOI'],
  ['127240', 'Office supplies, NOI'],
  ['141260', 'Rubber articles, NOI'],
  ['157240', 'Plumbing fixtures, NOI'],
  ['161030', 'Signs or displays, NOI'],
  ['173230', 'Store fixtures, NOI'],
];

const fixedItems: [item: string, description: string, cls: string][] = [
  ['18810', 'Bags, paper, flat', '55'],
  ['22260', 'Batteries, storage, wet', '65'],
  ['26600', 'Bottles, glass, empty', '85'],
  ['29240', 'Brick, common', '50'],
  ['35410', 'Cans, metal, empty', '150'],
  ['42230', 'Cement, dry, in bags', '50'],
  ['46160', 'Clay, in bags', '50'],
  ['51440', 'Cotton, raw, in bales', '85'],
  ['54530', 'Drums, steel, empty', '100'],
  ['60340', 'Fertilizer, dry, in bags', '50'],
  ['65000', 'Flour, in bags', '50'],
  ['70620', 'Glass, flat, crated', '85'],
  ['82120', 'Grain, in bags', '50'],
  ['91020', 'Iron or steel pipe', '55'],
  ['105900', 'Ladders, aluminum', '175'],
  ['114150', 'Lubricating oil, in cans', '65'],
  ['118920', 'Mattresses', '150'],
  ['136480', 'Refrigerators, household', '125'],
  ['147500', 'Paint, in cans', '55'],
  ['154300', 'Pallets, wooden, empty', '85'],
  ['163010', 'Salt, in bags', '50'],
  ['178690', 'Tile, ceramic', '55'],
  ['186320', 'Tires, pneumatic, new', '110'],
  ['197540', 'Wire, steel, on reels', '55'],
];

export function nmfcCodes(): Entry[] {
  const out: Entry[] = [];
  for (const [item, description] of densityItems) {
    densityScale.forEach(([sub, cls], i) => {
      out.push({ item, sub: String(i + 1), description: `${description}; density ${sub}`, class: cls });
    });
  }
  for (const [item, description, cls] of fixedItems) out.push({ item, sub: '', description, class: cls });
  return out;
}

const generatedClasses = densityScale.map(([, cls]) => cls);
const words = ['Assemblies', 'Components', 'Fixtures', 'Articles', 'Supplies', 'Parts', 'Goods', 'Equipment'];
const materials = ['plastic', 'steel', 'aluminum', 'wood', 'glass', 'paper', 'rubber', 'textile', 'ceramic'];

/**
 * The i-th generated NMFC entry (0-based): keys unique for any i below 9,000,000 (item 100000 +
 * i / 10, sub i % 10 with 0 as ''), deterministic, and cheap enough to compute a million times.
 */
export function generatedNmfc(i: number): Entry {
  const itemNo = 100000 + Math.floor(i / 10);
  const subNo = i % 10;
  const word = words[i % words.length] ?? 'Articles';
  const material = materials[Math.floor(i / 7) % materials.length] ?? 'steel';
  return {
    item: String(itemNo),
    sub: subNo === 0 ? '' : String(subNo),
    description: `${word}, ${material}, NOI (generated ${i})`,
    class: generatedClasses[i % generatedClasses.length] ?? '100',
  };
}
