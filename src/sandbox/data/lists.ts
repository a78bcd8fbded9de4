// The smaller reference lists, as the upstream serves them. Every entry has a string `code` and a
// `description`, except equipment types (`machine_readable`, `name`).
import type { Entry } from '../types.ts';

type Pair = [code: string, description: string];

const coded = (rows: Pair[], extra?: (code: string, i: number) => Entry): Entry[] =>
  rows.map(([code, description], i) => ({ code, description, ...(extra ? extra(code, i) : {}) }));

export function appointmentTypes(): Entry[] {
  return coded(
    [
      ['FCFS', 'First Come First Served'],
      ['APPT', 'By Appointment'],
      ['NOTICE', 'Call Ahead Notice'],
      ['WINDOW', 'Delivery Window'],
      ['DROP', 'Drop Trailer'],
      ['LIVE', 'Live Load or Unload'],
      ['PREAPPT', 'Pre-Scheduled Appointment'],
      ['RECURRING', 'Recurring Standing Appointment'],
      ['AFTERHRS', 'After Hours Appointment'],
      ['CARRIER', 'Carrier Scheduled'],
    ],
    (_c, i) => ({ id: i + 1, applies_to: ['pickup', 'delivery'] }),
  );
}

export function chargeLineItemCategories(): Entry[] {
  return coded(
    [
      ['LINEHAUL', 'Linehaul'],
      ['FUEL', 'Fuel Surcharge'],
      ['ACCESSORIAL', 'Accessorial'],
      ['DETENTION', 'Detention'],
      ['LAYOVER', 'Layover'],
      ['DRAYAGE', 'Drayage'],
      ['STORAGE', 'Storage'],
      ['CUSTOMS', 'Customs and Duties'],
      ['INSURANCE', 'Insurance'],
      ['TAX', 'Tax'],
      ['DISCOUNT', 'Discount'],
      ['ADJUSTMENT', 'Adjustment'],
      ['ADMIN', 'Administrative Fee'],
      ['OTHER', 'Other'],
    ],
    (_c, i) => ({ id: i + 1, sort_order: (i + 1) * 10 }),
  );
}

export function documentTypes(): Entry[] {
  return coded([
    ['BILL_OF_LADING', 'Bill of Lading'],
    ['PROOF_OF_DELIVERY', 'Proof of Delivery'],
    ['COMMERCIAL_INVOICE', 'Commercial Invoice'],
    ['CARRIER_INVOICE', 'Carrier Invoice'],
    ['CUSTOMER_INVOICE', 'Customer Invoice'],
    ['RATE_CONFIRMATION', 'Rate Confirmation'],
    ['PACKING_LIST', 'Packing List'],
    ['DELIVERY_RECEIPT', 'Delivery Receipt'],
    ['WEIGHT_CERTIFICATE', 'Weight Certificate'],
    ['INSPECTION_CERTIFICATE', 'Inspection Certificate'],
    ['LUMPER_RECEIPT', 'Lumper Receipt'],
    ['CERTIFICATE_OF_ORIGIN', 'Certificate of Origin'],
    ['CUSTOMS_ENTRY', 'Customs Entry'],
    ['HAZMAT_DECLARATION', "Shipper's Declaration for Dangerous Goods"],
    ['AIR_WAYBILL', 'Air Waybill'],
    ['OCEAN_BILL_OF_LADING', 'Ocean Bill of Lading'],
    ['ARRIVAL_NOTICE', 'Arrival Notice'],
    ['DELIVERY_ORDER', 'Delivery Order'],
    ['SHIPPING_LABEL', 'Shipping Label'],
    ['PHOTO', 'Photo'],
    ['DAMAGE_REPORT', 'Damage Report'],
    ['CLAIM', 'Claim'],
    ['OTHER', 'Other'],
  ]);
}

export function equipmentTypes(): Entry[] {
  const rows: [machine: string, name: string, lengthFt: number | null, temperatureControlled: boolean][] = [
    ['DRY_VAN', 'Dry Van', 53, false],
    ['DRY_VAN_48', 'Dry Van 48ft', 48, false],
    ['REEFER', 'Refrigerated', 53, true],
    ['FLATBED', 'Flatbed', 48, false],
    ['STEP_DECK', 'Step Deck', 48, false],
    ['DOUBLE_DROP', 'Double Drop', 48, false],
    ['LOWBOY', 'Lowboy', 40, false],
    ['CONESTOGA', 'Conestoga', 53, false],
    ['HOTSHOT', 'Hotshot', 40, false],
    ['BOX_TRUCK', 'Box Truck', 26, false],
    ['SPRINTER_VAN', 'Sprinter Van', 12, false],
    ['POWER_ONLY', 'Power Only', null, false],
    ['TANKER', 'Tanker', 42, false],
    ['HOPPER', 'Hopper Bottom', 42, false],
    ['CONTAINER_20', '20ft Container', 20, false],
    ['CONTAINER_40', '40ft Container', 40, false],
    ['CONTAINER_40_HC', '40ft High Cube Container', 40, false],
    ['CONTAINER_45', '45ft Container', 45, false],
    ['REEFER_CONTAINER_40', '40ft Reefer Container', 40, true],
    ['INTERMODAL_53', '53ft Intermodal Container', 53, false],
    ['CAR_HAULER', 'Car Hauler', 53, false],
    ['DUMP', 'Dump Trailer', 30, false],
  ];
  return rows.map(([machine_readable, name, length_ft, temperature_controlled], i) => ({
    id: i + 1,
    machine_readable,
    name,
    length_ft,
    temperature_controlled,
  }));
}

export function hazmat(): Entry[] {
  return coded(
    [
      ['1.1', 'Explosives with a mass explosion hazard'],
      ['1.2', 'Explosives with a projection hazard'],
      ['1.3', 'Explosives with predominantly a fire hazard'],
      ['1.4', 'Explosives with no significant blast hazard'],
      ['1.5', 'Very insensitive explosives'],
      ['1.6', 'Extremely insensitive articles'],
      ['2.1', 'Flammable gas'],
      ['2.2', 'Non-flammable, non-poisonous compressed gas'],
      ['2.3', 'Gas poisonous by inhalation'],
      ['3', 'Flammable and combustible liquid'],
      ['4.1', 'Flammable solid'],
      ['4.2', 'Spontaneously combustible material'],
      ['4.3', 'Dangerous when wet material'],
      ['5.1', 'Oxidizer'],
      ['5.2', 'Organic peroxide'],
      ['6.1', 'Poisonous (toxic) material'],
      ['6.2', 'Infectious substance'],
      ['7', 'Radioactive material'],
      ['8', 'Corrosive material'],
      ['9', 'Miscellaneous hazardous material'],
    ],
    (code) => ({ hazard_class: code.split('.')[0], division: code.includes('.') ? code : null }),
  );
}

export function locationTypes(): Entry[] {
  return coded([
    ['BUSINESS', 'Business'],
    ['RESIDENTIAL', 'Residential'],
    ['WAREHOUSE', 'Warehouse'],
    ['DISTRIBUTION_CENTER', 'Distribution Center'],
    ['MANUFACTURING', 'Manufacturing Facility'],
    ['RETAIL', 'Retail Store'],
    ['CONSTRUCTION_SITE', 'Construction Site'],
    ['TRADE_SHOW', 'Trade Show or Convention Center'],
    ['PORT', 'Port or Terminal'],
    ['RAIL_RAMP', 'Rail Ramp'],
    ['AIRPORT', 'Airport'],
    ['MILITARY', 'Military Base'],
    ['GOVERNMENT', 'Government Site'],
    ['SCHOOL', 'School'],
    ['HOSPITAL', 'Hospital'],
    ['FARM', 'Farm or Ranch'],
    ['SELF_STORAGE', 'Self Storage'],
    ['CROSS_DOCK', 'Cross Dock'],
  ]);
}

export function packageTypes(): Entry[] {
  return coded(
    [
      ['PLT', 'Pallet'],
      ['SKD', 'Skid'],
      ['BOX', 'Box'],
      ['CTN', 'Carton'],
      ['CRT', 'Crate'],
      ['DRM', 'Drum'],
      ['BAG', 'Bag'],
      ['BDL', 'Bundle'],
      ['BRL', 'Barrel'],
      ['BKT', 'Bucket'],
      ['CAS', 'Case'],
      ['COL', 'Coil'],
      ['CYL', 'Cylinder'],
      ['ENV', 'Envelope'],
      ['PCS', 'Pieces'],
      ['PAIL', 'Pail'],
      ['REL', 'Reel'],
      ['ROL', 'Roll'],
      ['TOTE', 'Tote'],
      ['TUBE', 'Tube'],
      ['GAYLORD', 'Gaylord'],
      ['IBC', 'Intermediate Bulk Container'],
      ['LSE', 'Loose'],
      ['OTH', 'Other'],
    ],
    (_c, i) => ({ id: i + 1, is_palletized: i < 2 }),
  );
}

/** Package types per carrier; the four carriers that have this path. */
export function carrierPackageTypes(): Map<string, Entry[]> {
  const perCarrier: Record<string, Pair[]> = {
    fedex: [
      ['YOUR_PACKAGING', 'Your Packaging'],
      ['FEDEX_ENVELOPE', 'FedEx Envelope'],
      ['FEDEX_PAK', 'FedEx Pak'],
      ['FEDEX_SMALL_BOX', 'FedEx Small Box'],
      ['FEDEX_MEDIUM_BOX', 'FedEx Medium Box'],
      ['FEDEX_LARGE_BOX', 'FedEx Large Box'],
      ['FEDEX_EXTRA_LARGE_BOX', 'FedEx Extra Large Box'],
      ['FEDEX_TUBE', 'FedEx Tube'],
      ['FEDEX_10KG_BOX', 'FedEx 10kg Box'],
      ['FEDEX_25KG_BOX', 'FedEx 25kg Box'],
    ],
    ups: [
      ['02', 'Customer Supplied Package'],
      ['01', 'UPS Letter'],
      ['03', 'Tube'],
      ['04', 'PAK'],
      ['21', 'UPS Express Box'],
      ['24', 'UPS 25KG Box'],
      ['25', 'UPS 10KG Box'],
      ['30', 'Pallet'],
      ['2a', 'Small Express Box'],
      ['2b', 'Medium Express Box'],
      ['2c', 'Large Express Box'],
    ],
    usps: [
      ['PACKAGE', 'Package'],
      ['FLAT_RATE_ENVELOPE', 'Priority Mail Flat Rate Envelope'],
      ['LEGAL_FLAT_RATE_ENVELOPE', 'Priority Mail Legal Flat Rate Envelope'],
      ['PADDED_FLAT_RATE_ENVELOPE', 'Priority Mail Padded Flat Rate Envelope'],
      ['SMALL_FLAT_RATE_BOX', 'Priority Mail Small Flat Rate Box'],
      ['MEDIUM_FLAT_RATE_BOX', 'Priority Mail Medium Flat Rate Box'],
      ['LARGE_FLAT_RATE_BOX', 'Priority Mail Large Flat Rate Box'],
      ['REGIONAL_RATE_BOX_A', 'Regional Rate Box A'],
      ['REGIONAL_RATE_BOX_B', 'Regional Rate Box B'],
      ['SOFT_PACK', 'Soft Pack'],
    ],
    dhl: [
      ['CUSTOMER_PACKAGING', 'Customer Packaging'],
      ['DHL_FLYER', 'DHL Flyer'],
      ['DHL_EXPRESS_ENVELOPE', 'DHL Express Envelope'],
      ['DHL_BOX_2', 'DHL Box 2 (Small)'],
      ['DHL_BOX_3', 'DHL Box 3'],
      ['DHL_BOX_4', 'DHL Box 4 (Medium)'],
      ['DHL_BOX_5', 'DHL Box 5'],
      ['DHL_BOX_6', 'DHL Box 6 (Large)'],
      ['DHL_BOX_7', 'DHL Box 7'],
      ['DHL_BOX_8', 'DHL Box 8 (Extra Large)'],
      ['DHL_TUBE', 'DHL Tube'],
    ],
  };
  return new Map(Object.entries(perCarrier).map(([carrier, rows]) => [carrier, coded(rows, () => ({ carrier }))]));
}

export function pieceTypes(): Entry[] {
  return coded([
    ['PALLET', 'Pallet'],
    ['BOX', 'Box'],
    ['CARTON', 'Carton'],
    ['CRATE', 'Crate'],
    ['DRUM', 'Drum'],
    ['BAG', 'Bag'],
    ['BUNDLE', 'Bundle'],
    ['ROLL', 'Roll'],
    ['REEL', 'Reel'],
    ['TOTE', 'Tote'],
    ['PIECE', 'Piece'],
    ['OTHER', 'Other'],
  ]);
}

export function vendorPocRoles(): Entry[] {
  return coded([
    ['DISPATCH', 'Dispatcher'],
    ['ACCOUNTING', 'Accounting'],
    ['BILLING', 'Billing Contact'],
    ['SALES', 'Sales Representative'],
    ['ACCOUNT_MANAGER', 'Account Manager'],
    ['OPERATIONS', 'Operations Manager'],
    ['CLAIMS', 'Claims'],
    ['SAFETY', 'Safety and Compliance'],
    ['CUSTOMER_SERVICE', 'Customer Service'],
    ['AFTER_HOURS', 'After Hours Contact'],
    ['OWNER', 'Owner'],
    ['DRIVER', 'Driver'],
  ]);
}

export function serviceLevels(): Entry[] {
  return coded(
    [
      ['STD', 'Standard'],
      ['GTD', 'Guaranteed'],
      ['GTD_AM', 'Guaranteed by Noon'],
      ['GTD_PM', 'Guaranteed by 5 PM'],
      ['EXP', 'Expedited'],
      ['ECO', 'Economy'],
      ['NDA', 'Next Day Air'],
      ['NDA_EARLY', 'Next Day Air Early'],
      ['2DA', 'Second Day Air'],
      ['3DS', 'Three Day Select'],
      ['GND', 'Ground'],
      ['TEAM', 'Team Service'],
      ['WHITE_GLOVE', 'White Glove'],
      ['TIME_CRITICAL', 'Time Critical'],
    ],
    (_c, i) => ({ id: i + 1, is_guaranteed: /GTD|TIME_CRITICAL/.test(_c) }),
  );
}

export function shipmentModes(): Entry[] {
  return coded(
    [
      ['LTL', 'Less Than Truckload'],
      ['FTL', 'Full Truckload'],
      ['VLTL', 'Volume Less Than Truckload'],
      ['DRAYAGE', 'Drayage'],
      ['PARCEL', 'Parcel'],
      ['INTERMODAL', 'Intermodal'],
      ['RAIL_CAR', 'Rail Car'],
      ['AIR', 'Air'],
      ['FCL', 'Full Container Load'],
      ['LCL', 'Less Than Container Load'],
    ],
    (_c, i) => ({ id: i + 1 }),
  );
}

export function shipmentRepRoles(): Entry[] {
  return coded([
    ['ACCOUNT_REP', 'Account Representative'],
    ['SALES_REP', 'Sales Representative'],
    ['CARRIER_REP', 'Carrier Representative'],
    ['OPERATIONS_REP', 'Operations Representative'],
    ['CUSTOMER_SERVICE_REP', 'Customer Service Representative'],
    ['BILLING_REP', 'Billing Representative'],
    ['TRACKING_REP', 'Tracking Representative'],
    ['CLAIMS_REP', 'Claims Representative'],
    ['CAPACITY_REP', 'Capacity Representative'],
    ['ESCALATION_REP', 'Escalation Contact'],
  ]);
}

export function stopStatusReasonCodes(): Entry[] {
  return coded(
    [
      ['ACCIDENT', 'Accident'],
      ['CONSIGNEE_CLOSED', 'Consignee Closed'],
      ['CONSIGNEE_RELATED', 'Consignee Related'],
      ['CUSTOMER_REQUESTED_FUTURE', 'Customer Requested Future Delivery'],
      ['DRIVER_RELATED', 'Driver Related'],
      ['EQUIPMENT_BREAKDOWN', 'Mechanical Breakdown'],
      ['HOLIDAY', 'Holiday'],
      ['INCORRECT_ADDRESS', 'Incorrect Address'],
      ['MISSED_APPOINTMENT', 'Missed Appointment'],
      ['NORMAL', 'Normal Status'],
      ['OTHER_CARRIER_RELATED', 'Other Carrier Related'],
      ['PREVIOUS_STOP', 'Previous Stop Delayed'],
      ['REFUSED_BY_CONSIGNEE', 'Refused by Consignee'],
      ['SHIPPER_RELATED', 'Shipper Related'],
      ['SHORTAGE', 'Shortage'],
      ['DAMAGED', 'Damaged'],
      ['TRAFFIC', 'Traffic'],
      ['WEATHER', 'Weather or Natural Disaster'],
      ['HOURS_OF_SERVICE', 'Driver Hours of Service'],
      ['BORDER_DELAY', 'Border Crossing Delay'],
      ['RECIPIENT_UNAVAILABLE', 'Recipient Unavailable'],
    ],
    (_c, i) => ({ id: i + 1 }),
  );
}

export function shipmentStatuses(): Entry[] {
  return coded(
    [
      ['DRAFT', 'Draft'],
      ['QUOTED', 'Quoted'],
      ['TENDERED', 'Tendered'],
      ['BOOKED', 'Booked'],
      ['DISPATCHED', 'Dispatched'],
      ['AT_PICKUP', 'At Pickup'],
      ['PICKED_UP', 'Picked Up'],
      ['IN_TRANSIT', 'In Transit'],
      ['OUT_FOR_DELIVERY', 'Out for Delivery'],
      ['AT_DELIVERY', 'At Delivery'],
      ['DELIVERED', 'Delivered'],
      ['EXCEPTION', 'Exception'],
      ['CANCELLED', 'Cancelled'],
      ['INVOICED', 'Invoiced'],
      ['CLOSED', 'Closed'],
    ],
    (_c, i) => ({ id: i + 1, is_terminal: ['DELIVERED', 'CANCELLED', 'CLOSED'].includes(_c) }),
  );
}
